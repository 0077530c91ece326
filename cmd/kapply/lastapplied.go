package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/schema"
)

func newLastAppliedCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "last-applied",
		Short: "View, set or edit the last-applied configuration, as kubectl apply view-/set-/edit-last-applied",
		Long: `The last-applied configuration (annotation kubectl.kubernetes.io/last-applied-configuration)
is what the next apply compares the file with: a field it has and the file lacks is
deleted. These commands read and write it byte for byte as kubectl's
view-last-applied, set-last-applied and edit-last-applied do, so either tool reads
what the other wrote.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newLastAppliedViewCommand(getter, streams),
		newLastAppliedSetCommand(getter, streams),
		newLastAppliedEditCommand(getter, streams),
	)
	return cmd
}

// fileFlags are -f and -R, shared by the ownership commands.
type fileFlags struct {
	filenames []string
	recursive bool
}

func (f *fileFlags) add(cmd *cobra.Command, usage string) {
	cmd.Flags().StringSliceVarP(&f.filenames, "filename", "f", nil, usage+" (repeatable; - for stdin)")
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "R", false, "process the directories given with -f recursively")
}

func (f fileFlags) options() resource.FilenameOptions {
	return resource.FilenameOptions{Filenames: f.filenames, Recursive: f.recursive}
}

// lastAppliedViewOptions are the flags of `kapply last-applied view`.
type lastAppliedViewOptions struct {
	files  fileFlags
	output string
}

func newLastAppliedViewCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts lastAppliedViewOptions
	cmd := &cobra.Command{
		Use:   "view (TYPE/NAME... | TYPE NAME... | -f FILENAME)",
		Short: "Print the last-applied configuration of objects, as kubectl apply view-last-applied",
		Example: `  kapply last-applied view deployment/web
  kapply last-applied view -f web.yaml -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLastAppliedView(getter, streams, args, opts)
		},
	}
	opts.files.add(cmd, "file naming the objects to view")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "yaml", `"yaml" or "json"`)
	return cmd
}

func runLastAppliedView(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts lastAppliedViewOptions) error {
	infos, err := liveInfos(getter, args, opts.files)
	if err != nil {
		return withCode(exitError, err)
	}
	for _, info := range infos {
		out, err := lastapplied.View(info.Object.(*unstructured.Unstructured), opts.output)
		if err != nil {
			return withCode(exitError, err)
		}
		if err := writeAll(streams.Out, out); err != nil {
			return withCode(exitError, err)
		}
	}
	return nil
}

// lastAppliedSetOptions are the flags of `kapply last-applied set`.
type lastAppliedSetOptions struct {
	files            fileFlags
	createAnnotation bool
	dryRun           string
}

func newLastAppliedSetCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts lastAppliedSetOptions
	cmd := &cobra.Command{
		Use:   "set -f FILENAME",
		Short: "Record the file as the last-applied configuration, changing nothing else, as kubectl apply set-last-applied",
		Example: `  kapply last-applied set -f web.yaml
  kapply last-applied set -f web.yaml --create-annotation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLastAppliedSet(cmd.Context(), getter, streams, opts)
		},
	}
	opts.files.add(cmd, "file with the objects whose record to set")
	cmd.Flags().BoolVar(&opts.createAnnotation, "create-annotation", false, "create the record on objects that have none")
	addDryRunFlag(cmd, &opts.dryRun)
	return cmd
}

// pendingPatch is an annotation patch computed for one object, sent only
// once every object of the command has one.
type pendingPatch struct {
	info  *resource.Info
	live  *unstructured.Unstructured
	patch []byte
}

func runLastAppliedSet(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts lastAppliedSetOptions) error {
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
	var pending []pendingPatch
	for _, info := range infos {
		p, err := planSet(ctx, info, opts.createAnnotation)
		if err != nil {
			return withCode(exitError, fmt.Errorf("%s: %w", refOf(info), err))
		}
		pending = append(pending, p)
	}
	return sendPatches(ctx, streams, pending, dryRun, "configured")
}

func planSet(ctx context.Context, info *resource.Info, create bool) (pendingPatch, error) {
	record, err := lastapplied.SetRecord(info.Object.(*unstructured.Unstructured))
	if err != nil {
		return pendingPatch{}, err
	}
	live, err := getLive(ctx, info)
	if err != nil {
		return pendingPatch{}, err
	}
	patch, err := lastapplied.Set(live, record, create)
	return pendingPatch{info: info, live: live, patch: patch}, err
}

// lastAppliedEditOptions are the flags of `kapply last-applied edit`.
type lastAppliedEditOptions struct {
	files fileFlags
}

func newLastAppliedEditCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts lastAppliedEditOptions
	cmd := &cobra.Command{
		Use:     "edit (TYPE/NAME | -f FILENAME)",
		Short:   "Edit the last-applied configuration in $KUBE_EDITOR or $EDITOR, as kubectl apply edit-last-applied",
		Example: `  KUBE_EDITOR=nano kapply last-applied edit deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLastAppliedEdit(cmd.Context(), getter, streams, args, opts)
		},
	}
	opts.files.add(cmd, "file naming the objects to edit")
	return cmd
}

func runLastAppliedEdit(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts lastAppliedEditOptions) error {
	infos, err := liveInfos(getter, args, opts.files)
	if err != nil {
		return withCode(exitError, err)
	}
	for _, info := range infos {
		p, err := planEdit(ctx, streams, info)
		if err != nil {
			return withCode(exitError, fmt.Errorf("%s: %w", refOf(info), err))
		}
		if err := sendPatches(ctx, streams, []pendingPatch{p}, apply.NoDryRun, "edited"); err != nil {
			return err
		}
	}
	return nil
}

// planEdit opens the record in the editor and returns the patch that
// records what was saved.
func planEdit(ctx context.Context, streams genericiooptions.IOStreams, info *resource.Info) (pendingPatch, error) {
	live := info.Object.(*unstructured.Unstructured)
	before, err := lastapplied.View(live, "yaml")
	if err != nil {
		return pendingPatch{}, err
	}
	after, err := editInEditor(ctx, streams, before)
	if err != nil {
		return pendingPatch{}, err
	}
	if bytes.Equal(before, after) {
		return pendingPatch{info: info, live: live}, nil
	}
	edited, err := lastapplied.FromYAML(after)
	if err != nil {
		return pendingPatch{}, err
	}
	if edited.GetKind() != live.GetKind() || edited.GetName() != live.GetName() {
		return pendingPatch{}, fmt.Errorf("the edited record names %s %q; kind and name must stay %s %q", edited.GetKind(), edited.GetName(), live.GetKind(), live.GetName())
	}
	record, err := lastapplied.SetRecord(edited)
	if err != nil {
		return pendingPatch{}, err
	}
	patch, err := lastapplied.Set(live, record, true)
	return pendingPatch{info: info, live: live, patch: patch}, err
}

// editInEditor writes content to a temporary file, runs $KUBE_EDITOR (or
// $EDITOR, or vi) on it through the shell, as kubectl does, and returns
// what was saved.
func editInEditor(ctx context.Context, streams genericiooptions.IOStreams, content []byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "kapply-edit-")
	if err != nil {
		return nil, fmt.Errorf("creating the file to edit: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "last-applied.yaml")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		return nil, fmt.Errorf("writing the file to edit: %w", err)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", editorCommand()+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.ErrOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("running the editor %q: %w", editorCommand(), err)
	}
	edited, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the edited file: %w", err)
	}
	return edited, nil
}

func editorCommand() string {
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if e := strings.TrimSpace(os.Getenv(env)); e != "" {
			return e
		}
	}
	return "vi"
}

// addDryRunFlag adds --dry-run; given alone it means "client".
func addDryRunFlag(cmd *cobra.Command, dryRun *string) {
	cmd.Flags().StringVar(dryRun, "dry-run", "none", `"none", "client" (print what would change, send nothing; the default of a bare --dry-run) or "server" (the server's dry run)`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

// sendPatches sends every pending patch (none in a client dry run) and
// prints a kubectl-style line per object.
func sendPatches(ctx context.Context, streams genericiooptions.IOStreams, pending []pendingPatch, dryRun apply.DryRun, verb string) error {
	suffix := dryRunSuffix(dryRun)
	for _, p := range pending {
		if p.patch == nil {
			fmt.Fprintf(streams.Out, "%s unchanged%s\n", refOf(p.info), suffix)
			continue
		}
		if err := sendPatch(ctx, p, dryRun); err != nil {
			return withCode(exitFailed, fmt.Errorf("%s: %w", refOf(p.info), err))
		}
		fmt.Fprintf(streams.Out, "%s %s%s\n", refOf(p.info), verb, suffix)
	}
	return nil
}

func dryRunSuffix(dryRun apply.DryRun) string {
	switch dryRun {
	case apply.ClientDryRun:
		return " (dry run)"
	case apply.ServerDryRun:
		return " (server dry run)"
	}
	return ""
}

// sendPatch sends one annotation patch, a JSON merge patch.
func sendPatch(ctx context.Context, p pendingPatch, dryRun apply.DryRun) error {
	if dryRun == apply.ClientDryRun {
		return nil
	}
	helper := resource.NewHelper(p.info.Client, p.info.Mapping).
		WithFieldManager(apply.DefaultFieldManager).
		DryRun(dryRun == apply.ServerDryRun)
	if _, err := helper.Patch(p.info.Namespace, p.info.Name, types.MergePatchType, p.patch, nil); err != nil {
		return fmt.Errorf("patching the last-applied record: %w", err)
	}
	return ctx.Err()
}

// builder starts a resource builder the way kubectl's commands do, with the
// namespace of the kubeconfig or -n.
func builder(getter *genericclioptions.ConfigFlags) (*resource.Builder, bool, error) {
	namespace, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, false, fmt.Errorf("reading the namespace from kubeconfig: %w", err)
	}
	return resource.NewBuilder(getter).Unstructured().NamespaceParam(namespace).DefaultNamespace(), enforce, nil
}

// liveInfos reads from the server the objects that TYPE/NAME arguments or
// files name.
func liveInfos(getter *genericclioptions.ConfigFlags, args []string, files fileFlags) ([]*resource.Info, error) {
	if len(args) == 0 && len(files.filenames) == 0 {
		return nil, errors.New("must specify TYPE/NAME or -f FILENAME")
	}
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	if len(files.filenames) > 0 {
		opts := files.options()
		b = b.FilenameParam(enforce, &opts).Latest()
	}
	infos, err := b.ResourceTypeOrNameArgs(false, args...).Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading objects: %w", err)
	}
	return infos, nil
}

// fileInfos reads the objects of the files, mapped to their resources but
// as the files declare them.
func fileInfos(getter *genericclioptions.ConfigFlags, files fileFlags) ([]*resource.Info, error) {
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	opts := files.options()
	infos, err := b.FilenameParam(enforce, &opts).Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading files: %w", err)
	}
	return infos, nil
}

// errNotFound reports an object of a file that does not exist.
var errNotFound = errors.New("not found on the server")

// getLive reads the live object of a file's object.
func getLive(ctx context.Context, info *resource.Info) (*unstructured.Unstructured, error) {
	obj, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
	if apierrors.IsNotFound(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading live object: %w", err)
	}
	live, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("reading live object: unexpected type %T", obj)
	}
	return live, ctx.Err()
}

// refOf names an object the way kubectl prints it: kind.group/name.
func refOf(info *resource.Info) string {
	gk := info.Mapping.GroupVersionKind.GroupKind()
	ref := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		ref += "." + gk.Group
	}
	return ref + "/" + info.Name
}

// schemaResolver answers merge schemas from the server's OpenAPI v3, as
// pkg/apply does for a run (the same adapter, repeated: pkg/apply keeps
// its own unexported).
func schemaResolver(getter *genericclioptions.ConfigFlags) (*schema.Resolver, error) {
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	builtins := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{scheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(builtins); err != nil {
			return nil, fmt.Errorf("building the scheme of built-in kinds: %w", err)
		}
	}
	return schema.NewResolver(schema.ResolverConfig{
		Source:    &openAPISource{client: dc.OpenAPIV3()},
		IsBuiltin: builtins.Recognizes,
	}), nil
}

// openAPISource adapts client-go's OpenAPI v3 client to schema.Source.
type openAPISource struct {
	client openapi.Client
	once   sync.Once
	paths  map[string]openapi.GroupVersion
	err    error
}

func (s *openAPISource) OpenAPIV3(gv k8sschema.GroupVersion) ([]byte, error) {
	s.once.Do(func() { s.paths, s.err = s.client.Paths() })
	if s.err != nil {
		return nil, fmt.Errorf("listing OpenAPI v3 documents: %w", s.err)
	}
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	doc, ok := s.paths[path]
	if !ok {
		return nil, &schema.NotFoundError{GVK: gv.WithKind("")}
	}
	data, err := doc.Schema(runtime.ContentTypeJSON)
	if err != nil {
		return nil, fmt.Errorf("fetching OpenAPI v3 document %s: %w", path, err)
	}
	return data, nil
}

// writeAll writes b or reports why not.
func writeAll(w io.Writer, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
