package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// fileObject is one object read from a file, ready to send.
type fileObject struct {
	// obj is the file's object with its last-applied record set.
	obj *unstructured.Unstructured
	// applied is the last-applied record: the file's object as JSON.
	applied string
	mapping *meta.RESTMapping
}

func (o *fileObject) String() string {
	return fmt.Sprintf("%s %s/%s", o.obj.GetKind(), o.obj.GetNamespace(), o.obj.GetName())
}

// load reads every .yaml, .yml and .json file under dir.
func (f *floor) load(dir string) ([]*fileObject, error) {
	var objs []*fileObject
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isManifest(path) {
			return err
		}
		found, err := f.loadFile(path)
		objs = append(objs, found...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("floor: loading %s: %w", dir, err)
	}
	return objs, nil
}

func isManifest(path string) bool {
	switch filepath.Ext(path) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// loadFile reads the YAML documents of one file.
func (f *floor) loadFile(path string) ([]*fileObject, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*fileObject
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading a document of %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		o, err := f.newFileObject(doc)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
		objs = append(objs, o)
	}
}

// newFileObject decodes one YAML document, maps its kind to a resource and
// records it as last applied.
func (f *floor) newFileObject(doc []byte) (*fileObject, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	applied, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	gvk := u.GroupVersionKind()
	mapping, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", gvk, err)
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[lastAppliedKey] = string(applied)
	u.SetAnnotations(annotations)
	return &fileObject{obj: u, applied: string(applied), mapping: mapping}, nil
}

func (f *floor) resource(o *fileObject) dynamic.ResourceInterface {
	r := f.client.Resource(o.mapping.Resource)
	if o.mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(o.obj.GetNamespace())
	}
	return r
}

// listKey is one LIST: a resource in a namespace ("" when cluster-scoped).
type listKey struct {
	resource  schema.GroupVersionResource
	namespace string
}

// liveSet holds the live objects by list and name.
type liveSet map[listKey]map[string]*unstructured.Unstructured

func keyOf(o *fileObject) listKey {
	key := listKey{resource: o.mapping.Resource}
	if o.mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		key.namespace = o.obj.GetNamespace()
	}
	return key
}

// newLiveSet returns the lists objs need, and an empty set for them.
func newLiveSet(objs []*fileObject) ([]listKey, liveSet) {
	var keys []listKey
	live := liveSet{}
	for _, o := range objs {
		if key := keyOf(o); live[key] == nil {
			live[key] = map[string]*unstructured.Unstructured{}
			keys = append(keys, key)
		}
	}
	return keys, live
}

// listLive makes one LIST per (resource, namespace) of objs, in parallel.
func (f *floor) listLive(ctx context.Context, objs []*fileObject) (liveSet, error) {
	keys, live := newLiveSet(objs)
	lists := make([]*unstructured.UnstructuredList, len(keys))
	err := forEach(ctx, f.parallel, len(keys), func(ctx context.Context, i int) error {
		var err error
		lists[i], err = f.client.Resource(keys[i].resource).Namespace(keys[i].namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("floor: listing %s in %q: %w", keys[i].resource, keys[i].namespace, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, list := range lists {
		for j := range list.Items {
			live[keys[i]][list.Items[j].GetName()] = &list.Items[j]
		}
	}
	return live, nil
}

func (l liveSet) has(o *fileObject) bool {
	_, ok := l[keyOf(o)][o.obj.GetName()]
	return ok
}

// lastApplied is the last-applied record of o's live object.
func (l liveSet) lastApplied(o *fileObject) (string, error) {
	obj, ok := l[keyOf(o)][o.obj.GetName()]
	if !ok {
		return "", fmt.Errorf("floor: %s is not in the cluster", o)
	}
	applied, ok := obj.GetAnnotations()[lastAppliedKey]
	if !ok {
		return "", fmt.Errorf("floor: %s has no last-applied record", o)
	}
	return applied, nil
}

// patch is the patch that brings o's live object to the file, which must
// differ from it.
func (l liveSet) patch(o *fileObject) ([]byte, types.PatchType, error) {
	applied, err := l.lastApplied(o)
	if err != nil {
		return nil, "", err
	}
	if applied == o.applied {
		return nil, "", fmt.Errorf("floor: %s is the same as its file, want a change", o)
	}
	return computePatch(o, applied)
}
