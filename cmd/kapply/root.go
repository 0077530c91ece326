package main

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// run builds the command tree and executes it with args; it never exits.
func run(args []string, streams genericiooptions.IOStreams) error {
	// client-go logs through klog what kapply reports itself, per object and
	// with its file (discovery failures, for one); keep stderr to kapply's words.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	root := newRootCommand(streams)
	root.SetArgs(args)
	return root.Execute()
}

// rootOptions are the flags every command shares, beside cli-runtime's.
type rootOptions struct {
	qps   float32
	burst int
}

// newRootCommand is `kapply`, with kubeconfig flags from cli-runtime shared
// by every subcommand.
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	configFlags := genericclioptions.NewConfigFlags(true)
	var opts rootOptions
	// Read when a command builds its client, after flags are parsed.
	configFlags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		cfg.QPS, cfg.Burst = opts.qps, opts.burst
		return cfg
	}
	cmd := &cobra.Command{
		Use:   "kapply",
		Short: "Declarative management of Kubernetes objects, with a three-way merge that understands custom resources",
		Long: `kapply keeps Kubernetes objects in step with YAML files, like kubectl apply:
it creates what is missing and updates what exists with a three-way merge of the
last-applied configuration, the file and the live object.

Installed as kubectl-kapply on PATH, it also runs as "kubectl kapply".`,
		Example: `  # Apply every object in a directory tree
  kapply apply -f manifests/ -R

  # See what it would change, and why
  kapply diff -f manifests/ -R --explain

  # Apply and delete what the files no longer declare (an ApplySet, as kubectl's)
  kapply apply -f manifests/ -R -n shop --prune --applyset=shop

  # Hand replicas over to an autoscaler
  kapply release -f manifests/web.yaml --field spec.replicas

  # Print the client and server versions
  kapply version`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	configFlags.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().Float32Var(&opts.qps, "qps", 500, "requests per second the client may send to the API server")
	cmd.PersistentFlags().IntVar(&opts.burst, "burst", 1000, "requests the client may send at once above --qps")
	cmd.AddCommand(
		newVersionCommand(configFlags, streams),
		newApplyCommand(configFlags, streams),
		newLastAppliedCommand(configFlags, streams),
		newAdoptCommand(configFlags, streams),
		newExportCommand(configFlags, streams),
		newReleaseCommand(configFlags, streams),
		newStatusCommand(configFlags, streams),
		newDeleteCommand(configFlags, streams),
		newDiffCommand(configFlags, streams),
	)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return withCode(exitError, err)
	})
	return cmd
}
