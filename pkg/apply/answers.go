package apply

import (
	"context"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/openapi"

	"github.com/kapply/kapply/pkg/schema"
)

// runAnswers are what one run learns of the server's kinds: the REST
// mappings it asked for and the merge schemas of the OpenAPI v3 documents
// it listed. Each run makes its own, so a long-lived Applier never plans
// with an earlier run's answer (a CRD installed since then gets its
// schema), and a failure is never kept as an answer, not even within the
// run. What lies under them stays: the mapper, and kubectl's disk caches
// of discovery and of OpenAPI documents, which the server validates.
type runAnswers struct {
	mapper meta.RESTMapper
	// mappings are the mapper's answers by group-version-kind: asking it
	// took 10 µs an object (a 10,000-object run waited 0.1 s for them
	// before its first LIST).
	mappings sync.Map
	schemas  *schema.Resolver
	// ssa and isBuiltin serve server-side apply computed locally.
	ssa       *ssaTypes
	isBuiltin func(k8sschema.GroupVersionKind) bool

	dynamic dynamic.Interface
	retry   func(context.Context, func() error) error
}

// newRunAnswers gives a run its own answers over c's clients; requests go
// through the run's retry rule and end with ctx.
func newRunAnswers(ctx context.Context, c Clients, isBuiltin func(k8sschema.GroupVersionKind) bool, retry func(context.Context, func() error) error) *runAnswers {
	a := &runAnswers{mapper: c.Mapper, dynamic: c.Dynamic, retry: retry, isBuiltin: isBuiltin}
	cfg := schema.ResolverConfig{IsBuiltin: isBuiltin, Overrides: c.MergeKeys, Shared: c.SharedSchemas}
	if c.OpenAPI != nil {
		cfg.Source = &openAPISource{ctx: ctx, client: openapi.NewClientWithContext(c.OpenAPI), retry: retry, host: c.Host}
	}
	if c.Dynamic != nil {
		cfg.ServerCRD = func(gvk k8sschema.GroupVersionKind) (*apiextensionsv1.CustomResourceDefinition, error) {
			return a.serverCRD(ctx, gvk)
		}
	}
	a.schemas = schema.NewResolver(cfg)
	a.ssa = newSSATypes(cfg.Source)
	return a
}

// resetMapper forgets what the mapper and the run know of the server's
// kinds: a CRD may have added or changed one.
func (a *runAnswers) resetMapper() {
	a.mappings.Clear()
	meta.MaybeResetRESTMapper(a.mapper)
}

var crdResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// serverCRD reads the CRD that serves gvk, for a custom kind the run's
// OpenAPI documents do not describe: the server publishes a new CRD's
// schema a moment after it serves the kind. A kind no CRD serves (an
// aggregated API), or a CRD the user may not read, is not found: the kind
// then merges as one without a schema (maps merge, lists are replaced).
func (a *runAnswers) serverCRD(ctx context.Context, gvk k8sschema.GroupVersionKind) (*apiextensionsv1.CustomResourceDefinition, error) {
	notFound := &schema.NotFoundError{GVK: gvk}
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	name := mapping.Resource.Resource + "." + gvk.Group
	var live *apiextensionsv1.CustomResourceDefinition
	err = a.retry(ctx, func() error {
		u, getErr := a.dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if getErr != nil {
			return getErr
		}
		live = &apiextensionsv1.CustomResourceDefinition{}
		return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, live)
	})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		return nil, notFound
	case err != nil:
		return nil, err
	case live.Spec.Group != gvk.Group || live.Spec.Names.Kind != gvk.Kind:
		return nil, notFound
	}
	return live, nil
}

// openAPISource serves a run's resolver the server's OpenAPI v3 documents:
// listed once per run (again after a failure), each fetched through the
// REST client given, whose HTTP cache, if any, keeps it on disk keyed by
// the hash in the listing. It does not use the discovery client's own
// OpenAPIV3(): that keeps the listing, and its errors, for the client's
// life.
type openAPISource struct {
	ctx    context.Context
	client openapi.ClientWithContext
	retry  func(context.Context, func() error) error
	// host is the server's URL, which names it in OpenAPIV3URL.
	host string

	mu    sync.Mutex
	paths map[string]openapi.GroupVersionWithContext
}

func (s *openAPISource) OpenAPIV3(gv k8sschema.GroupVersion) ([]byte, error) {
	path, doc, err := s.listing(gv)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = s.retry(s.ctx, func() error {
		var fetchErr error
		data, fetchErr = doc.SchemaWithContext(s.ctx, runtime.ContentTypeJSON)
		return fetchErr
	})
	if err != nil {
		return nil, fmt.Errorf("fetching OpenAPI v3 document %s: %w", path, err)
	}
	return data, nil
}

// OpenAPIV3URL names gv's document as the listing does, with its hash
// (schema.HashedSource).
func (s *openAPISource) OpenAPIV3URL(gv k8sschema.GroupVersion) (server, path string, err error) {
	_, doc, err := s.listing(gv)
	if err != nil {
		return "", "", err
	}
	return s.host, doc.ServerRelativeURL(), nil
}

// listing is gv's entry in the run's listing, and its path there.
func (s *openAPISource) listing(gv k8sschema.GroupVersion) (string, openapi.GroupVersionWithContext, error) {
	paths, err := s.listed()
	if err != nil {
		return "", nil, err
	}
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	doc, ok := paths[path]
	if !ok {
		return "", nil, &schema.NotFoundError{GVK: gv.WithKind("")}
	}
	return path, doc, nil
}

// listed is the run's listing of the server's documents. Callers wait for
// one listing; a failed one is not kept.
func (s *openAPISource) listed() (map[string]openapi.GroupVersionWithContext, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths != nil {
		return s.paths, nil
	}
	err := s.retry(s.ctx, func() error {
		var err error
		s.paths, err = s.client.PathsWithContext(s.ctx)
		return err
	})
	if err != nil {
		s.paths = nil
		return nil, fmt.Errorf("listing OpenAPI v3 documents: %w", err)
	}
	return s.paths, nil
}
