package load

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// ErrNothingNamed: neither TYPE/NAME arguments nor files were given (the
// CLI says which flags name them).
var ErrNothingNamed = errors.New("no objects named: give TYPE/NAME arguments or files")

// ReadLive reads from the server the objects that TYPE/NAME arguments
// (names) or files name, in the namespace of the kubeconfig or -n: the
// targets of the ownership commands. Files are read as LoadContext reads
// them: each once, within ctx and MaxInputSize.
func ReadLive(ctx context.Context, getter genericclioptions.RESTClientGetter, names []string, files Files) ([]*Object, error) {
	if len(names) == 0 && len(files.Filenames) == 0 {
		return nil, ErrNothingNamed
	}
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	if len(files.Filenames) > 0 {
		if b, err = withFiles(ctx, b, enforce, getter, files); err != nil {
			return nil, fmt.Errorf("reading objects: %w", err)
		}
		b = b.Latest()
	}
	infos, err := b.ResourceTypeOrNameArgs(false, names...).Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading objects: %w", err)
	}
	return objectsOf(infos)
}

// ReadFiles reads the objects of the files, mapped to their resources but
// as the files declare them; each file once, within ctx and MaxInputSize.
func ReadFiles(ctx context.Context, getter genericclioptions.RESTClientGetter, files Files) ([]*Object, error) {
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	if b, err = withFiles(ctx, b, enforce, getter, files); err != nil {
		return nil, fmt.Errorf("reading files: %w", err)
	}
	infos, err := b.Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading files: %w", err)
	}
	return objectsOf(infos)
}

// builder starts a resource builder the way kubectl's commands do, with the
// namespace of the kubeconfig or -n.
func builder(getter genericclioptions.RESTClientGetter) (*resource.Builder, bool, error) {
	namespace, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, false, fmt.Errorf("reading the namespace from kubeconfig: %w", err)
	}
	return resource.NewBuilder(getter).Unstructured().NamespaceParam(namespace).DefaultNamespace(), enforce, nil
}

// withFiles gives b the inputs of files (FilenameParam's), each read once
// by readInput and given as the bytes read; b reads by itself only a
// kustomization and what it refuses before reading anything. A read that
// fails fails the whole, as the builder does without ContinueOnError.
func withFiles(ctx context.Context, b *resource.Builder, enforce bool, getter genericclioptions.RESTClientGetter, files Files) (*resource.Builder, error) {
	inputs, ok := listInputs(files)
	if !ok {
		return b.FilenameParam(enforce, filenameOptions(files)), nil
	}
	files = withRequestTimeout(getter, files)
	for _, in := range inputs {
		data, err := readInput(ctx, in, files)
		if err != nil {
			return nil, err
		}
		b = b.Stream(readerOf(in, data), in.source)
	}
	if enforce {
		b = b.RequireNamespace()
	}
	return b, nil
}

func filenameOptions(files Files) *resource.FilenameOptions {
	return &resource.FilenameOptions{Filenames: files.Filenames, Recursive: files.Recursive, Kustomize: files.Kustomize}
}

func objectsOf(infos []*resource.Info) ([]*Object, error) {
	objects := make([]*Object, 0, len(infos))
	for _, info := range infos {
		obj, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("reading %s: unexpected object type %T", info.Source, info.Object)
		}
		objects = append(objects, &Object{Source: info.Source, Obj: obj, Mapping: info.Mapping, Info: info})
	}
	return objects, nil
}
