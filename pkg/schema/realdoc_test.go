package schema

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// realDocDir holds the documents kube-apiserver v1.37.1 serves, one gzipped
// file per group-version; see testdata/openapi/README.md.
const realDocDir = "../../testdata/openapi"

// readRealDoc reads the v1 document of a group ("" is the core group).
func readRealDoc(tb testing.TB, group string) []byte {
	tb.Helper()
	name := "api__v1.json.gz"
	if group != "" {
		name = "apis__" + group + "__v1.json.gz"
	}
	return readRealFile(tb, filepath.Join(realDocDir, name))
}

func readRealFile(tb testing.TB, file string) []byte {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("reading a real OpenAPI document: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("decompressing %s: %v", file, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("decompressing %s: %v", file, err)
	}
	return raw
}

// realDocFiles lists every real document.
func realDocFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(realDocDir, "*.json.gz"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no documents in %s: %v", realDocDir, err)
	}
	return files
}

func realKind(t *testing.T, gvk schema.GroupVersionKind) *Kind {
	t.Helper()
	doc, err := ParseOpenAPIV3(readRealDoc(t, gvk.Group))
	if err != nil {
		t.Fatalf("parsing the document of %s: %v", gvk.GroupVersion(), err)
	}
	kind, err := doc.Kind(gvk)
	if err != nil {
		t.Fatalf("building %s: %v", gvk, err)
	}
	return kind
}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

func TestRealDocumentLists(t *testing.T) {
	const pod = "spec.template.spec."
	cases := []struct {
		gvk schema.GroupVersionKind
		want
	}{
		{gvk("apps", "v1", "Deployment"), want{path: pod + "containers", typ: List, list: Map, keys: []string{"name"}}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "containers.ports", typ: List, list: Map,
			keys: []string{"containerPort"}, identity: []string{"containerPort", "protocol"}}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "containers.args", typ: List, list: Atomic}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "containers.env", typ: List, list: Map, keys: []string{"name"}}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "containers.volumeMounts", typ: List, list: Map, keys: []string{"mountPath"}}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "volumes", typ: List, list: Map, keys: []string{"name"}}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "tolerations", typ: List, list: Atomic}},
		{gvk("apps", "v1", "Deployment"), want{path: pod + "imagePullSecrets", typ: List, list: Map, keys: []string{"name"}}},
		{gvk("apps", "v1", "Deployment"), want{path: "metadata.finalizers", typ: List, list: Set}},
		{gvk("apps", "v1", "Deployment"), want{path: "metadata.ownerReferences", typ: List, list: Map, keys: []string{"uid"}}},
		{gvk("apps", "v1", "Deployment"), want{path: "metadata.managedFields", typ: List, list: Atomic}},
		{gvk("apps", "v1", "StatefulSet"), want{path: "spec.volumeClaimTemplates", typ: List, list: Atomic}},
		{gvk("", "v1", "Service"), want{path: "spec.ports", typ: List, list: Map,
			keys: []string{"port"}, identity: []string{"port", "protocol"}}},
		{gvk("", "v1", "Pod"), want{path: "spec.containers", typ: List, list: Map, keys: []string{"name"}}},
		{gvk("", "v1", "Pod"), want{path: "spec.hostAliases", typ: List, list: Map, keys: []string{"ip"}}},
		{gvk("batch", "v1", "Job"), want{path: pod + "initContainers", typ: List, list: Map, keys: []string{"name"}}},
		{gvk("batch", "v1", "CronJob"), want{path: "spec.jobTemplate." + pod + "containers", typ: List, list: Map, keys: []string{"name"}}},
	}
	for _, c := range cases {
		t.Run(c.gvk.Kind+"/"+c.path, func(t *testing.T) {
			checkWant(t, realKind(t, c.gvk).Root, c.want)
		})
	}
}

func TestRealDocumentObjects(t *testing.T) {
	const pod = "spec.template.spec."
	cases := []struct {
		gvk  schema.GroupVersionKind
		path string
		test func(*Node) bool
	}{
		{gvk("apps", "v1", "Deployment"), "spec.strategy", func(n *Node) bool { return n.Type == Object && n.RetainKeys }},
		{gvk("apps", "v1", "Deployment"), pod + "volumes", func(n *Node) bool { return n.Item().RetainKeys }},
		{gvk("apps", "v1", "Deployment"), pod + "volumes.configMap", func(n *Node) bool { return !n.RetainKeys && !n.AtomicMap }},
		{gvk("apps", "v1", "Deployment"), "spec.strategy.rollingUpdate.maxSurge", func(n *Node) bool { return n.Type == Scalar && n.IntOrString }},
		{gvk("apps", "v1", "Deployment"), "spec.selector.matchLabels", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar }},
		{gvk("apps", "v1", "Deployment"), pod + "containers.resources.limits", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar }},
		{gvk("apps", "v1", "Deployment"), "metadata.labels", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar }},
		{gvk("apps", "v1", "Deployment"), pod + "containers.env.valueFrom.configMapKeyRef", func(n *Node) bool { return n.Type == Object && !n.AtomicMap }},
		{gvk("", "v1", "Service"), "spec.ports.targetPort", func(n *Node) bool { return n.Type == Scalar && n.IntOrString }},
		{gvk("", "v1", "ConfigMap"), "data", func(n *Node) bool { return n.Type == Object && n.Fields == nil && n.Item().TypeOf() == Scalar }},
		{gvk("", "v1", "Secret"), "stringData", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar }},
		{gvk("apps", "v1", "ControllerRevision"), "data", func(n *Node) bool { return n.Type == Object }},
		{gvk("policy", "v1", "PodDisruptionBudget"), "spec.selector", func(n *Node) bool { return n.Type == Object && n.AtomicMap }},
		{gvk("policy", "v1", "PodDisruptionBudget"), "spec.selector.matchLabels", func(n *Node) bool { return n.Type == Object && !n.AtomicMap }},
		{gvk("apps", "v1", "Deployment"), "spec.selector", func(n *Node) bool { return n.Type == Object && !n.AtomicMap }},
	}
	for _, c := range cases {
		t.Run(c.gvk.Kind+"/"+c.path, func(t *testing.T) {
			if n := at(t, realKind(t, c.gvk).Root, c.path); !c.test(n) {
				t.Errorf("unexpected node %+v", *n)
			}
		})
	}
}

// TestRealDocumentCustomReading checks the list-type reading of built-in
// types, as a custom kind embedding them would see it.
func TestRealDocumentCustomReading(t *testing.T) {
	doc, err := ParseOpenAPIV3(readRealDoc(t, "apps"))
	if err != nil {
		t.Fatal(err)
	}
	kind, err := doc.CustomKind(gvk("apps", "v1", "Deployment"))
	if err != nil {
		t.Fatal(err)
	}
	const pod = "spec.template.spec."
	checkWant(t, kind.Root, want{path: pod + "containers.ports", typ: List, list: Map, keys: []string{"containerPort", "protocol"}})
	checkWant(t, kind.Root, want{path: pod + "tolerations", typ: List, list: Atomic})
	if !at(t, kind.Root, pod+"containers.env.valueFrom.configMapKeyRef").AtomicMap {
		t.Error("configMapKeyRef: want AtomicMap in the list-type reading")
	}
}

// TestObjectMetaMatchesServer keeps the hand-written ObjectMeta of CRDs in
// step with the server's.
func TestObjectMetaMatchesServer(t *testing.T) {
	doc, err := ParseOpenAPIV3(readRealDoc(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	kind, err := doc.CustomKind(gvk("", "v1", "ConfigMap"))
	if err != nil {
		t.Fatal(err)
	}
	server, ours := kind.Root.Field("metadata"), objectMetaNode()
	for name, f := range server.Fields {
		o := ours.Field(name)
		sl, sk := f.ListStrategy()
		ol, ok := o.ListStrategy()
		if o.TypeOf() != f.Type || sl != ol || !slices.Equal(sk, ok) {
			t.Errorf("metadata.%s: ours %s %s %v, server %s %s %v", name, o.TypeOf(), ol, ok, f.Type, sl, sk)
		}
	}
}

func TestRealRecursiveSchema(t *testing.T) {
	done := make(chan struct{})
	var kind *Kind
	go func() {
		defer close(done)
		kind = realKind(t, gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("building CustomResourceDefinition (recursive JSONSchemaProps) did not finish")
	}
	props := at(t, kind.Root, "spec.versions.schema.openAPIV3Schema")
	if at(t, kind.Root, "spec.versions.schema.openAPIV3Schema.properties").Item() != props {
		t.Error("JSONSchemaProps.properties values: want the JSONSchemaProps node itself")
	}
	checkWant(t, kind.Root, want{path: "spec.versions", typ: List, list: Atomic})
}

// TestRealDocumentsBuildEveryKind builds each declared kind in both readings.
func TestRealDocumentsBuildEveryKind(t *testing.T) {
	for _, file := range realDocFiles(t) {
		doc, err := ParseOpenAPIV3(readRealFile(t, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for gvk := range doc.byGVK {
			k1, err1 := doc.Kind(gvk)
			k2, err2 := doc.CustomKind(gvk)
			if err1 != nil || err2 != nil || !k1.Known() || !k2.Known() {
				t.Errorf("%s: %v %v", gvk, err1, err2)
			}
		}
	}
}

// TestDocumentConcurrentKinds builds many kinds of one document at once, in
// both readings (run with -race).
func TestDocumentConcurrentKinds(t *testing.T) {
	doc, err := ParseOpenAPIV3(readRealDoc(t, "apps"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for gvk := range doc.byGVK {
		wg.Go(func() {
			if _, err := doc.Kind(gvk); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := doc.CustomKind(gvk); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
