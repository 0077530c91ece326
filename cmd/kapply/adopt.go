package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/schema"
)

// adoptOptions are the flags of `kapply adopt`.
type adoptOptions struct {
	files  fileFlags
	dryRun string
}

func newAdoptCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts adoptOptions
	cmd := &cobra.Command{
		Use:   "adopt -f FILENAME",
		Short: "Hand objects made imperatively (kubectl create, run, expose) over to the files: record each file as last-applied",
		Long: `Switch objects from imperative commands to declarative files. adopt records the
file as the last-applied configuration of each object that has none, exactly as
kapply apply would, and changes nothing else: the patch carries only the annotation
and the object's resourceVersion, so a concurrent write makes it fail instead.

For each object it prints the fields where the live object differs from the file:
what the next kapply apply will change. Objects that already have a record are
left alone (see kapply last-applied set).`,
		Example: `  # Export what kubectl create made, adopt it, and manage it with apply from now on
  kapply export deployment/web > web.yaml
  kapply adopt -f web.yaml --dry-run
  kapply adopt -f web.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAdopt(cmd.Context(), getter, streams, opts)
		},
	}
	opts.files.add(cmd, "file, directory or URL with the objects to adopt")
	addDryRunFlag(cmd, &opts.dryRun)
	return cmd
}

// adoption is one object's patch and what the next apply changes.
type adoption struct {
	pendingPatch
	changes []merge.Change
	skip    error
}

func runAdopt(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts adoptOptions) error {
	dryRun, err := parseDryRun(opts.dryRun)
	if err != nil {
		return withCode(exitError, err)
	}
	if len(opts.files.filenames) == 0 {
		return withCode(exitError, errors.New("must specify -f"))
	}
	infos, err := fileInfos(getter, opts.files)
	if err != nil {
		return withCode(exitError, err)
	}
	resolver, err := schemaResolver(getter)
	if err != nil {
		return withCode(exitError, err)
	}
	adoptions, err := planAdoptions(ctx, infos, resolver)
	if err != nil {
		return withCode(exitError, err)
	}
	for _, a := range adoptions {
		if err := reportAdoption(ctx, streams, a, dryRun); err != nil {
			return err
		}
	}
	return nil
}

// planAdoptions plans every object before any is written, so bad input
// changes nothing.
func planAdoptions(ctx context.Context, infos []*resource.Info, resolver *schema.Resolver) ([]adoption, error) {
	var out []adoption
	for _, info := range infos {
		a, err := planAdoption(ctx, info, resolver)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", refOf(info), err)
		}
		out = append(out, a)
	}
	return out, nil
}

func planAdoption(ctx context.Context, info *resource.Info, resolver *schema.Resolver) (adoption, error) {
	file := info.Object.(*unstructured.Unstructured)
	live, err := getLive(ctx, info)
	if errors.Is(err, errNotFound) {
		return adoption{}, fmt.Errorf("%w: adopt records a file on an existing object; kapply apply creates it", err)
	}
	if err != nil {
		return adoption{}, err
	}
	patch, err := lastapplied.Adopt(file, live)
	if errors.Is(err, lastapplied.ErrHasRecord) {
		return adoption{pendingPatch: pendingPatch{info: info, live: live}, skip: err}, nil
	}
	if err != nil {
		return adoption{}, err
	}
	changes, err := nextApply(file, live, resolver)
	return adoption{pendingPatch: pendingPatch{info: info, live: live, patch: patch}, changes: changes}, err
}

// nextApply is what kapply apply of file would change once live carries
// file's record: the engine's plan, without the fields it keeps.
func nextApply(file, live *unstructured.Unstructured, resolver *schema.Resolver) ([]merge.Change, error) {
	withRecord, _, err := lastapplied.Attach(file)
	if err != nil {
		return nil, err
	}
	record, err := lastapplied.Read(withRecord)
	if err != nil {
		return nil, err
	}
	adopted := live.DeepCopy()
	adopted.SetAnnotations(mergeAnnotations(live.GetAnnotations(), withRecord.GetAnnotations()))
	kind, err := resolver.Kind(file.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	plan, err := merge.ThreeWay(record, withRecord.Object, adopted.Object, kind)
	if err != nil {
		return nil, fmt.Errorf("planning the next apply: %w", err)
	}
	var changes []merge.Change
	for _, c := range plan.Changes {
		if c.Reason != merge.KeptUnmanaged {
			changes = append(changes, c)
		}
	}
	return changes, nil
}

// mergeAnnotations adds the record annotations of file to live's.
func mergeAnnotations(live, file map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range live {
		out[k] = v
	}
	for _, k := range []string{lastapplied.Annotation, lastapplied.CompactAnnotation} {
		if v, ok := file[k]; ok {
			out[k] = v
		}
	}
	return out
}

func reportAdoption(ctx context.Context, streams genericiooptions.IOStreams, a adoption, dryRun apply.DryRun) error {
	if a.skip != nil {
		fmt.Fprintf(streams.ErrOut, "%s skipped: %v (kapply last-applied set replaces it)\n", refOf(a.info), a.skip)
		return nil
	}
	if err := sendPatch(ctx, a.pendingPatch, dryRun); err != nil {
		return withCode(exitFailed, fmt.Errorf("%s: %w", refOf(a.info), err))
	}
	fmt.Fprintf(streams.Out, "%s adopted%s\n", refOf(a.info), dryRunSuffix(dryRun))
	if len(a.changes) == 0 {
		fmt.Fprintln(streams.Out, "  the next apply changes nothing")
		return nil
	}
	fmt.Fprintln(streams.Out, "  the next apply changes:")
	for _, c := range a.changes {
		fmt.Fprintf(streams.Out, "    %s: %s -> %s (%s)\n", c.Path, showValue(c.Old), showValue(c.New), c.Reason)
	}
	return nil
}

// showValue prints a value compactly, as JSON; absent is "(none)".
func showValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
