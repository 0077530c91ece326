package realworld_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
)

// project is one install manifest of ../shared/realworld, applied the way
// its users are told to apply it.
type project struct {
	name string
	// namespace is passed with -n and created before the first apply, for
	// manifests that name none (argo-cd: `kubectl create namespace argocd;
	// kubectl apply -n argocd -f install.yaml`).
	namespace string
	dir       string
	objects   []*unstructured.Unstructured
}

// projectNamespaces are the namespaces to pass with -n, by project.
var projectNamespaces = map[string]string{"argo-cd": "argocd"}

func loadProjects(t *testing.T) []*project {
	t.Helper()
	root := fixture.RealWorldDir(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("reading %s: %v", root, err)
	}
	var out []*project
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := &project{name: e.Name(), namespace: projectNamespaces[e.Name()], dir: filepath.Join(root, e.Name())}
		if p.objects, err = readObjects(p.dir); err != nil {
			t.Fatalf("reading %s: %v", p.dir, err)
		}
		out = append(out, p)
	}
	// Gatekeeper comes last: while it is installed, its webhook refuses
	// namespaces it cannot reach.
	sort.SliceStable(out, func(i, j int) bool { return out[j].name == "gatekeeper" && out[i].name != "gatekeeper" })
	return out
}

// readObjects decodes every YAML document of every file of dir, in file
// order, as kapply and kubectl read them with -R.
func readObjects(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj map[string]any
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(obj) > 0 {
				out = append(out, &unstructured.Unstructured{Object: obj})
			}
		}
	}
	return out, nil
}

// editLabel marks the object the edit step changes.
const editLabel = "realworld.kapply.dev/edited"

// edited writes the project's objects to one file in a fresh directory,
// with one object changed: a label added and, on a Deployment, an
// environment variable added to its first container, or, on a
// CustomResourceDefinition, a property added to the first version's schema.
// It returns the directory and the changed object.
func (p *project) edited(t *testing.T) (string, *unstructured.Unstructured) {
	t.Helper()
	target := p.editTarget()
	var buf bytes.Buffer
	var changed *unstructured.Unstructured
	for _, obj := range p.objects {
		obj = obj.DeepCopy()
		if sameObject(obj, target) {
			edit(t, obj)
			changed = obj
		}
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatalf("encoding %s: %v", obj.GetName(), err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "edited.yaml"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, changed
}

// editTarget picks the first Deployment, else the first
// CustomResourceDefinition, else the first object.
func (p *project) editTarget() *unstructured.Unstructured {
	for _, kind := range []string{"Deployment", "CustomResourceDefinition"} {
		for _, obj := range p.objects {
			if obj.GetKind() == kind {
				return obj
			}
		}
	}
	return p.objects[0]
}

func sameObject(a, b *unstructured.Unstructured) bool {
	return a.GetKind() == b.GetKind() && a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
}

func edit(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[editLabel] = "true"
	obj.SetLabels(labels)
	switch obj.GetKind() {
	case "Deployment":
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		first := containers[0].(map[string]any)
		env, _ := first["env"].([]any)
		first["env"] = append(env, map[string]any{"name": "REALWORLD_EDITED", "value": "true"})
		if err := unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
	case "CustomResourceDefinition":
		versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
		first := versions[0].(map[string]any)
		props, _, _ := unstructured.NestedMap(first, "schema", "openAPIV3Schema", "properties")
		props["realworldEdited"] = map[string]any{"type": "string"}
		if err := unstructured.SetNestedMap(first, props, "schema", "openAPIV3Schema", "properties"); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedSlice(obj.Object, versions, "spec", "versions"); err != nil {
			t.Fatal(err)
		}
	}
}

// editLanded reports whether the live object carries the edit.
func editLanded(live *unstructured.Unstructured) bool {
	if live.GetLabels()[editLabel] != "true" {
		return false
	}
	switch live.GetKind() {
	case "Deployment":
		containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
		env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
		for _, e := range env {
			if e.(map[string]any)["name"] == "REALWORLD_EDITED" {
				return true
			}
		}
		return false
	case "CustomResourceDefinition":
		versions, _, _ := unstructured.NestedSlice(live.Object, "spec", "versions")
		_, found, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "realworldEdited")
		return found
	}
	return true
}

// ref is how both tools name an object in their output lines, without the
// group: "deployment/argocd-server".
func ref(obj *unstructured.Unstructured) string {
	return strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
}
