package schema

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Document is one parsed /openapi/v3/<group-version> document. Graphs are
// built on demand, per kind, and memoized per component, so kinds of one
// document share nodes: treat returned graphs as read-only (ApplyOverrides
// copies what it changes). A Document is safe for concurrent use.
type Document struct {
	schemas map[string]*rawSchema
	byGVK   map[schema.GroupVersionKind]string

	mu       sync.Mutex
	builders map[dialect]*builder
}

type rawDocument struct {
	Components struct {
		Schemas map[string]*rawSchema `json:"schemas"`
	} `json:"components"`
}

// ParseOpenAPIV3 parses a document as served by kube-apiserver at
// /openapi/v3/<group-version>. It checks that every $ref names a component,
// so that building graphs later cannot fail.
func ParseOpenAPIV3(doc []byte) (*Document, error) {
	var raw rawDocument
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("decoding OpenAPI v3 document: %w", err)
	}
	schemas := raw.Components.Schemas
	if err := checkRefs(schemas); err != nil {
		return nil, fmt.Errorf("checking OpenAPI v3 document: %w", err)
	}
	return &Document{
		schemas:  schemas,
		byGVK:    indexGVKs(schemas),
		builders: map[dialect]*builder{},
	}, nil
}

// indexGVKs maps each x-kubernetes-group-version-kind to its component. When
// several components claim one GVK the smallest name wins, so the choice
// does not depend on map order.
func indexGVKs(schemas map[string]*rawSchema) map[schema.GroupVersionKind]string {
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	index := map[schema.GroupVersionKind]string{}
	for _, name := range names {
		for _, g := range schemas[name].GVKs {
			gvk := schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
			if _, taken := index[gvk]; !taken {
				index[gvk] = name
			}
		}
	}
	return index
}

// Kind returns the graph of a built-in kind (Strategic = true): lists merge
// as strategic merge patch merges them, by x-kubernetes-patch-strategy and
// patch-merge-key. Use CustomKind for a custom resource served by the same
// kind of document. The error wraps ErrNotFound when no component declares
// gvk.
func (d *Document) Kind(gvk schema.GroupVersionKind) (*Kind, error) {
	return d.kind(gvk, strategicDialect)
}

// CustomKind returns the graph of a custom resource (Strategic = false):
// lists merge by x-kubernetes-list-type and list-map-keys, unmarked lists are
// atomic, and x-kubernetes-map-type: atomic objects are replaced whole.
func (d *Document) CustomKind(gvk schema.GroupVersionKind) (*Kind, error) {
	return d.kind(gvk, structuralDialect)
}

// Has reports whether the document declares gvk.
func (d *Document) Has(gvk schema.GroupVersionKind) bool {
	_, ok := d.byGVK[gvk]
	return ok
}

// GVKs lists the group-version-kinds the document declares
// (x-kubernetes-group-version-kind), sorted by group, version and kind. A
// document also declares shared kinds, such as DeleteOptions, for other
// group-versions.
func (d *Document) GVKs() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(d.byGVK))
	for gvk := range d.byGVK {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return out
}

func (d *Document) kind(gvk schema.GroupVersionKind, dl dialect) (*Kind, error) {
	name, ok := d.byGVK[gvk]
	if !ok {
		return nil, &NotFoundError{GVK: gvk}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.builders[dl]
	if b == nil {
		b = newBuilder(d.schemas, dl)
		d.builders[dl] = b
	}
	root := b.root(&rawSchema{Ref: componentPrefix + name})
	return &Kind{Root: root, Strategic: dl == strategicDialect}, nil
}
