package apply

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// Target is one object of an ownership command (last-applied, adopt,
// release, status, export), mapped to its API resource.
type Target struct {
	// Ref names the object the way kubectl prints it: kind.group/name.
	Ref string
	// Source is the file (or URL, or "STDIN") that names the object.
	Source string
	// Obj is the object as the file declares it, or as the server returned
	// it when read with ReadLive.
	Obj *unstructured.Unstructured

	info *resource.Info
}

// TargetError is a failure of one target; its message starts with the
// target's Ref.
type TargetError struct {
	Ref string
	Err error
}

func (e *TargetError) Error() string { return e.Ref + ": " + e.Err.Error() }

func (e *TargetError) Unwrap() error { return e.Err }

func targetError(t Target, err error) error {
	if err == nil {
		return nil
	}
	return &TargetError{Ref: t.Ref, Err: err}
}

// ReadLive reads from the server the objects that TYPE/NAME arguments
// (names) or files name, in the namespace of the kubeconfig or -n.
func ReadLive(getter genericclioptions.RESTClientGetter, names []string, files Files) ([]Target, error) {
	if len(names) == 0 && len(files.Filenames) == 0 {
		return nil, errors.New("must specify TYPE/NAME or -f FILENAME")
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
	return targetsOf(infos)
}

// ReadFiles reads the objects of the files, mapped to their resources but
// as the files declare them.
func ReadFiles(getter genericclioptions.RESTClientGetter, files Files) ([]Target, error) {
	b, enforce, err := builder(getter)
	if err != nil {
		return nil, err
	}
	infos, err := b.FilenameParam(enforce, filenameOptions(files)).Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading files: %w", err)
	}
	return targetsOf(infos)
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

func targetsOf(infos []*resource.Info) ([]Target, error) {
	targets := make([]Target, 0, len(infos))
	for _, info := range infos {
		obj, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("reading %s: unexpected object type %T", info.Source, info.Object)
		}
		targets = append(targets, Target{Ref: refOf(info), Source: info.Source, Obj: obj, info: info})
	}
	return targets, nil
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
