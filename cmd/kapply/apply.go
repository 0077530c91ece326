package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/schema"
)

// applyOptions are the flags of `kapply apply`.
type applyOptions struct {
	filenames    []string
	recursive    bool
	kustomize    string
	fieldManager string
	timeout      time.Duration
	mergeKeys    []string
	mergeKeyFile string
}

func newApplyCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts applyOptions
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY)",
		Short: "Create or update objects from files, with a three-way merge",
		Long: `Apply the objects in the files to the cluster: objects that do not exist are
created, with the last-applied configuration recorded exactly as kubectl records it.
Namespaces and CustomResourceDefinitions are applied first, and custom resources of
a CRD in the same run wait until it is established.

One bad object never stops the others: every failure is printed with its file and
object, and the exit code is 1.`,
		Example: `  # Apply one file
  kapply apply -f deployment.yaml

  # Apply a directory tree into a namespace
  kapply apply -f manifests/ -R -n staging

  # Apply a kustomization
  kapply apply -k overlays/prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runApply(cmd, getter, streams, opts)
		},
	}
	cmd.Flags().StringSliceVarP(&opts.filenames, "filename", "f", nil, "file, directory or URL with the objects to apply (repeatable; - for stdin)")
	cmd.Flags().BoolVarP(&opts.recursive, "recursive", "R", false, "process the directories given with -f recursively")
	cmd.Flags().StringVarP(&opts.kustomize, "kustomize", "k", "", "apply the output of this kustomization directory")
	cmd.Flags().StringVar(&opts.fieldManager, "field-manager", apply.DefaultFieldManager, "name recorded in managedFields for kapply's writes")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", time.Minute, "how long to wait for CRDs of the run to become established")
	cmd.Flags().StringArrayVar(&opts.mergeKeys, "merge-key", nil, "merge a list of a kind by keys: 'KIND[.GROUP][/VERSION]:PATH=KEY[,KEY]' or ':PATH:set' (repeatable; see docs/merge-keys.md)")
	cmd.Flags().StringVar(&opts.mergeKeyFile, "merge-keys-file", "", "YAML file declaring merge keys for lists of custom resources (see docs/merge-keys.md)")
	return cmd
}

func runApply(cmd *cobra.Command, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts applyOptions) error {
	if len(opts.filenames) == 0 && opts.kustomize == "" {
		return withCode(exitError, fmt.Errorf("must specify one of -f or -k"))
	}
	mergeKeys, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile)
	if err != nil {
		return withCode(exitError, err)
	}
	namespace, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return withCode(exitError, fmt.Errorf("reading the namespace from kubeconfig: %w", err))
	}
	events, err := apply.Run(cmd.Context(), getter, apply.Options{
		Files:            apply.Files{Filenames: opts.filenames, Recursive: opts.recursive, Kustomize: opts.kustomize},
		Namespace:        namespace,
		EnforceNamespace: enforce,
		FieldManager:     opts.fieldManager,
		Timeout:          opts.timeout,
		MergeKeys:        mergeKeys,
	})
	if err != nil {
		return withCode(exitError, err)
	}
	if printEvents(streams, events) > 0 {
		return withCode(exitFailed, nil)
	}
	return nil
}

// parseMergeKeys reads --merge-keys-file, then every --merge-key.
func parseMergeKeys(flags []string, file string) ([]schema.Override, error) {
	var overrides []schema.Override
	if file != "" {
		fromFile, err := schema.LoadMergeKeysFile(file)
		if err != nil {
			return nil, err
		}
		overrides = fromFile
	}
	for _, f := range flags {
		o, err := schema.ParseMergeKey(f)
		if err != nil {
			return nil, err
		}
		overrides = append(overrides, o)
	}
	return overrides, nil
}
