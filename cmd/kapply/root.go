package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	kcluster "github.com/kapply/kapply/pkg/cluster"
)

// run executes the command tree with args until the first SIGINT or
// SIGTERM; it never exits.
func run(args []string, streams genericiooptions.IOStreams) error {
	// The first SIGINT or SIGTERM ends the context: requests in flight are
	// cut, retries stop sleeping, and every object not yet written is
	// reported failed (exit 1). A second one ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	returned := make(chan struct{})
	defer func() {
		close(returned)
		stop()
	}()
	go func() {
		<-ctx.Done()
		stop()
		select {
		case <-returned:
		default: // a signal: a plugin may hold a request no context reaches (discovery's)
			kcluster.StopExecPlugins()
		}
	}()
	return runContext(ctx, args, streams)
}

// keepRunningOnClosedOutput makes a write to a stdout or stderr whose
// reader is gone (`kapply apply ... | head -1`) fail with EPIPE instead of
// killing the process, as Go does by default at the next write to fd 1 or 2
// wherever the run is. Commands that write objects concurrently call it: a
// kill between an apply --force's delete and its create loses the object,
// and one in the middle of a run leaves it half applied, with no summary.
// The line not printed then fails the run (exit 1) and the run finishes.
func keepRunningOnClosedOutput() { signal.Ignore(syscall.SIGPIPE) }

// runContext builds the command tree and executes it with args until ctx
// ends; it never exits.
func runContext(ctx context.Context, args []string, streams genericiooptions.IOStreams) error {
	// client-go logs through klog what kapply reports itself, per object and
	// with its file (discovery failures, for one); keep stderr to kapply's
	// words unless -v asks for klog's (see logOptions.start).
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	defer klog.SetOutput(io.Discard)
	if _, isFile := streams.ErrOut.(*os.File); !isFile {
		streams.ErrOut = &lockedWriter{w: streams.ErrOut}
	}
	root, configFlags := newRootCommandAndFlags(streams)
	root.SetArgs(args)
	if err := applyPreferences(root, configFlags, args, streams.ErrOut); err != nil {
		return err
	}
	runExecPluginsOurselves(configFlags, streams.ErrOut)
	return root.ExecuteContext(ctx)
}

// rootOptions are the flags every command shares, beside cli-runtime's and
// klog's.
type rootOptions struct {
	qps   float32
	burst int
	log   logOptions
	// matchServerVersion is kubectl's --match-server-version.
	matchServerVersion bool
}

// logOptions are klog's verbosity flags, -v and --vmodule, as kubectl has
// them: -v=6 logs every request (method, URL, status), -v=7 their headers.
// From -v=8 client-go logs request and response bodies, Secret values in
// clear among them, so those levels need --log-bodies.
type logOptions struct {
	bodies bool
	// vmodule is klog's --vmodule, read back to find body levels set per file.
	vmodule flag.Value
}

// klogFlagsMu serializes the binding of klog's process-wide flags.
var klogFlagsMu sync.Mutex

// bodyLevel is the first klog level at which client-go logs bodies.
const bodyLevel = 8

// addFlags binds klog's -v and --vmodule through a private flag set (klog's
// flags set process-wide state: they start from 0 on every run, as a test
// runs many in one process) and adds --log-bodies.
func (o *logOptions) addFlags(flags *pflag.FlagSet) {
	// klog's Level.String reads what Level.Set writes atomically, without
	// atomics: runs started at once in one process (the tests) take turns.
	klogFlagsMu.Lock()
	defer klogFlagsMu.Unlock()
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	for _, name := range []string{"v", "vmodule"} {
		f := klogFlags.Lookup(name)
		// Set to its zero value, which klog's flags always accept.
		if err := f.Value.Set(map[string]string{"v": "0", "vmodule": ""}[name]); err != nil {
			panic(fmt.Sprintf("resetting klog's -%s: %v", name, err))
		}
		f.DefValue = f.Value.String()
		flags.AddGoFlag(f)
	}
	o.vmodule = klogFlags.Lookup("vmodule").Value
	flags.BoolVar(&o.bodies, "log-bodies", false, fmt.Sprintf("allow -v=%d and above, at which client-go logs request and response bodies, Secret values included", bodyLevel))
}

// start sends klog's output to stderr when -v asks for it, and refuses the
// levels that log bodies without --log-bodies.
func (o *logOptions) start(stderr io.Writer) error {
	if (klog.V(bodyLevel).Enabled() || o.vmoduleLogsBodies()) && !o.bodies {
		return fmt.Errorf("-v=%d and above log request and response bodies, Secret values included; pass --log-bodies to allow it, or use -v=7 or less", bodyLevel)
	}
	if klog.V(1).Enabled() {
		klog.SetOutput(stderr)
	}
	return nil
}

// vmoduleLogsBodies reports whether --vmodule sets any file to bodyLevel or
// above: klog.V above answers for root.go only, and client-go's files log
// the bodies. klog keeps the flag as it checked it, "PATTERN=N,...", and
// exports no parser for it.
func (o *logOptions) vmoduleLogsBodies() bool {
	if o.vmodule == nil {
		return false
	}
	for _, item := range strings.Split(o.vmodule.String(), ",") {
		_, level, _ := strings.Cut(item, "=")
		if n, err := strconv.Atoi(level); err == nil && n >= bodyLevel {
			return true
		}
	}
	return false
}

// newRootCommand is `kapply`, with kubeconfig flags from cli-runtime shared
// by every subcommand.
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newRootCommandAndFlags(streams)
	return cmd
}

// newRootCommandAndFlags is newRootCommand and its kubeconfig flags.
func newRootCommandAndFlags(streams genericiooptions.IOStreams) (*cobra.Command, *genericclioptions.ConfigFlags) {
	configFlags := genericclioptions.NewConfigFlags(true)
	var opts rootOptions
	// Read when a command builds its client, after flags are parsed.
	warnings := newCommandWarnings(streams.ErrOut)
	configFlags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		cfg.QPS, cfg.Burst = opts.qps, opts.burst
		cfg.WarningHandler = warnings
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
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := opts.log.start(streams.ErrOut); err != nil {
				return withCode(exitError, err)
			}
			if opts.matchServerVersion {
				if err := checkServerVersion(configFlags); err != nil {
					return withCode(exitError, err)
				}
			}
			return nil
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	configFlags.AddFlags(cmd.PersistentFlags())
	addKubercFlag(cmd.PersistentFlags())
	cmd.PersistentFlags().Float32Var(&opts.qps, "qps", 500, "requests per second the client may send to the API server")
	cmd.PersistentFlags().IntVar(&opts.burst, "burst", 1000, "requests the client may send at once above --qps")
	opts.log.addFlags(cmd.PersistentFlags())
	addMatchServerVersionFlag(cmd.PersistentFlags(), &opts.matchServerVersion)
	cmd.AddCommand(
		newVersionCommand(configFlags, streams),
		newApplyCommand(configFlags, streams),
		newLastAppliedCommand(configFlags, streams),
		newAdoptCommand(configFlags, streams),
		newExportCommand(configFlags, streams),
		newReleaseCommand(configFlags, streams),
		newMigrateCommand(configFlags, streams),
		newStatusCommand(configFlags, streams),
		newDeleteCommand(configFlags, streams),
		newDiffCommand(configFlags, streams),
		newPlanCommand(configFlags, streams),
		newHistoryCommand(configFlags, streams),
		newRollbackCommand(configFlags, streams),
	)
	cmd.SetFlagErrorFunc(flagError)
	registerCompletions(cmd, configFlags)
	return cmd, configFlags
}

// runExecPluginsOurselves makes kapply, not client-go, run the kubeconfig's
// exec credential plugins (see kcluster.RunExecPluginOurselves), last of
// getter's config wrappers: after kuberc's, which sets the plugin policy.
func runExecPluginsOurselves(getter *genericclioptions.ConfigFlags, stderr io.Writer) {
	inner := getter.WrapConfigFn
	getter.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		if inner != nil {
			cfg = inner(cfg)
		}
		kcluster.RunExecPluginOurselves(cfg, stderr)
		return cfg
	}
}
