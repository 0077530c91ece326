package schema

import (
	"errors"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Source supplies OpenAPI v3 documents, one per group-version, as served at
// /openapi/v3/apis/<group>/<version> (or /openapi/v3/api/v1). A
// group-version the server does not publish is an error wrapping
// ErrNotFound. The apply run adapts client-go's discovery OpenAPIV3(), whose
// cached client keeps documents on disk keyed by the server's hash.
type Source interface {
	OpenAPIV3(gv schema.GroupVersion) ([]byte, error)
}

// ResolverConfig configures a Resolver.
type ResolverConfig struct {
	// Source supplies server documents; nil means none (CRDs and overrides
	// only).
	Source Source
	// IsBuiltin reports whether a kind is served from Go types, and so
	// patched with a strategic merge patch; kubectl's test is
	// scheme.Scheme.Recognizes. Nil treats every kind as custom.
	IsBuiltin func(schema.GroupVersionKind) bool
	// ServerCRD, when set, gives the server's CRD of a custom kind that no
	// document of Source describes (an error wrapping ErrNotFound when
	// there is none): the server publishes a new CRD's schema a moment
	// after it serves the kind, and a kind without a schema has its keyed
	// lists replaced whole.
	ServerCRD func(schema.GroupVersionKind) (*apiextensionsv1.CustomResourceDefinition, error)
	// Overrides are user-declared merge keys, applied last.
	Overrides []Override
	// Shared, when set, holds the documents this run's other Resolvers
	// (other contexts) parsed: a document Source lists with the same URL
	// and hash is taken from there instead of fetched and parsed again.
	Shared *SharedDocuments
}

// Resolver answers the schema of each kind of an apply run. Each server
// document is fetched and parsed once per run, each kind's graph built once;
// a failure is not kept, so the next call tries again. It is safe for
// concurrent use. CRDs added with AddCRD take precedence over the server.
// Make one per run: what it has read of the server is never checked again.
type Resolver struct {
	cfg   ResolverConfig
	docs  memo[schema.GroupVersion, *Document]
	kinds memo[schema.GroupVersionKind, *Kind]

	mu   sync.RWMutex
	crds map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition
}

// NewResolver returns a Resolver for one run.
func NewResolver(cfg ResolverConfig) *Resolver {
	return &Resolver{cfg: cfg, crds: map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition{}}
}

// AddCRD makes the CRD the schema source of its kind, ahead of the server,
// for a CRD applied in the same run. Kinds already resolved are resolved
// again on their next Kind call.
func (r *Resolver) AddCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	r.mu.Lock()
	r.crds[gk] = crd
	r.mu.Unlock()
	r.kinds.forget(func(gvk schema.GroupVersionKind) bool { return gvk.GroupKind() == gk })
}

// Kind returns the schema of gvk with overrides applied. A kind nobody
// describes is not an error: it has a nil Root (Known() false), so maps
// merge and lists are replaced whole.
func (r *Resolver) Kind(gvk schema.GroupVersionKind) (*Kind, error) {
	return r.kinds.get(gvk, func() (*Kind, error) { return r.resolve(gvk) })
}

func (r *Resolver) resolve(gvk schema.GroupVersionKind) (*Kind, error) {
	kind, err := r.base(gvk)
	if errors.Is(err, ErrNotFound) {
		kind, err = r.fromServerCRD(gvk)
	}
	if errors.Is(err, ErrNotFound) {
		kind, err = &Kind{Strategic: r.isBuiltin(gvk)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resolving schema of %s: %w", gvk, err)
	}
	return ApplyOverrides(kind, gvk, r.cfg.Overrides)
}

// base is the kind's graph before overrides: from a CRD of this run, else
// from the server's document for its group-version.
func (r *Resolver) base(gvk schema.GroupVersionKind) (*Kind, error) {
	if crd := r.crd(gvk.GroupKind()); crd != nil {
		return FromCRD(crd, gvk.Version)
	}
	doc, err := r.document(gvk.GroupVersion())
	if err != nil {
		return nil, err
	}
	if r.isBuiltin(gvk) {
		return doc.Kind(gvk)
	}
	return doc.CustomKind(gvk)
}

// fromServerCRD is the graph of a custom kind from the server's CRD.
func (r *Resolver) fromServerCRD(gvk schema.GroupVersionKind) (*Kind, error) {
	if r.isBuiltin(gvk) || r.cfg.ServerCRD == nil {
		return nil, &NotFoundError{GVK: gvk}
	}
	crd, err := r.cfg.ServerCRD(gvk)
	if err != nil {
		return nil, fmt.Errorf("reading the CRD of %s: %w", gvk.GroupKind(), err)
	}
	return FromCRD(crd, gvk.Version)
}

func (r *Resolver) crd(gk schema.GroupKind) *apiextensionsv1.CustomResourceDefinition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.crds[gk]
}

// document fetches and parses a group-version's document once per run,
// or takes it from the run's other contexts (ResolverConfig.Shared).
func (r *Resolver) document(gv schema.GroupVersion) (*Document, error) {
	return r.docs.get(gv, func() (*Document, error) {
		if r.cfg.Source == nil {
			return nil, fmt.Errorf("no source of OpenAPI documents: %w", ErrNotFound)
		}
		if key, ok := r.sharedKey(gv); ok {
			return r.cfg.Shared.get(key, func() (*Document, error) { return r.fetch(gv) })
		}
		return r.fetch(gv)
	})
}

// fetch fetches and parses gv's document.
func (r *Resolver) fetch(gv schema.GroupVersion) (*Document, error) {
	data, err := r.cfg.Source.OpenAPIV3(gv)
	if err != nil {
		return nil, fmt.Errorf("fetching OpenAPI v3 document of %s: %w", gv, err)
	}
	doc, err := ParseOpenAPIV3(data)
	if err != nil {
		return nil, fmt.Errorf("parsing OpenAPI v3 document of %s: %w", gv, err)
	}
	return doc, nil
}

func (r *Resolver) isBuiltin(gvk schema.GroupVersionKind) bool {
	return r.cfg.IsBuiltin != nil && r.cfg.IsBuiltin(gvk)
}
