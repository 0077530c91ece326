package load

import (
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
// targets of the ownership commands.
func ReadLive(getter genericclioptions.RESTClientGetter, names []string, files Files) ([]*Object, error) {
	if len(names) == 0 && len(files.Filenames) == 0 {
		return nil, ErrNothingNamed
	}
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	if len(files.Filenames) > 0 {
		b = b.FilenameParam(enforce, filenameOptions(files)).Latest()
	}
	infos, err := b.ResourceTypeOrNameArgs(false, names...).Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading objects: %w", err)
	}
	return objectsOf(infos)
}

// ReadFiles reads the objects of the files, mapped to their resources but
// as the files declare them.
func ReadFiles(getter genericclioptions.RESTClientGetter, files Files) ([]*Object, error) {
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	infos, err := b.FilenameParam(enforce, filenameOptions(files)).Flatten().Do().Infos()
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
