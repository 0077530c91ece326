package cluster

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Clients are what a run talks to the server with, and its retry rule.
type Clients struct {
	Dynamic dynamic.Interface
	// Lists, when set, serves the LISTs that read many live objects at once
	// and the deletes of a run (a REST client of dynamic.ConfigFor, as the
	// dynamic client has, on the same transport): a LIST's answer is
	// decoded once instead of twice over (decodeList), a delete's answer
	// gives the UID deleted (see rawrequest.go). Without it, they go
	// through Dynamic.
	Lists rest.Interface
	// Mapper maps kinds to API resources. A run after the Applier's first
	// resets it (meta.MaybeResetRESTMapper) before asking, so that no
	// answer outlives the run that got it; so does a run that applies CRDs
	// or meets a kind it does not know.
	Mapper meta.RESTMapper
	// OpenAPI serves the server's OpenAPI v3 documents (GET /openapi/v3
	// and the documents it lists), which give each kind its merge
	// strategies; each run lists them anew. NewClients takes the cached
	// discovery client's REST client, whose HTTP cache (kubectl's
	// --cache-dir) keeps the documents on disk by the hash the server
	// publishes. Nil: no schema from the server's documents.
	OpenAPI rest.Interface
	// Discovery answers the check that the server is reachable, made once
	// before any write (GET /version); nil skips the check.
	Discovery discovery.DiscoveryInterface
	// Host names the server in errors.
	Host string
	// RequestTimeout, when set, bounds each request; a retry window longer
	// than it is shortened to it.
	RequestTimeout time.Duration
	// Backoff spaces the attempts at requests an unavailable server did not
	// take; zero means DefaultBackoff.
	Backoff wait.Backoff
	// RetryWindow bounds those attempts (see DefaultRetryWindow, the
	// default); a shorter RequestTimeout shortens it.
	RetryWindow time.Duration
}

// NewClients builds the clients of cfg with kapply's transport rules: one
// rate limiter for all of them (SharedRateLimiter), an answer's
// Retry-After left to the run's one retry bound instead of client-go's own
// retries (TakeRetryAfter), and the server's warnings handed to the sink
// of the request's context (WithWarningSink). mapper and schemaDiscovery
// (which serves the OpenAPI documents through its REST client) are
// usually cached ones.
func NewClients(cfg *rest.Config, mapper meta.RESTMapper, schemaDiscovery discovery.CachedDiscoveryInterface) (Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = SharedRateLimiter(cfg)
	}
	cfg.Wrap(TakeRetryAfter)
	cfg.WarningHandlerWithContext = serverWarnings{}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("creating client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("creating client: %w", err)
	}
	listsCfg := dynamic.ConfigFor(cfg)
	listsCfg.GroupVersion, listsCfg.APIPath = nil, "/if-you-see-this-search-for-the-break"
	lists, err := rest.UnversionedRESTClientForConfigAndClient(listsCfg, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("creating client: %w", err)
	}
	// The reachability check goes through the same transport, so that its
	// retries follow the run's rule too.
	version, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("creating discovery client: %w", err)
	}
	c := Clients{Dynamic: dyn, Lists: lists, Mapper: mapper, Discovery: version, Host: cfg.Host, RequestTimeout: cfg.Timeout}
	if schemaDiscovery != nil {
		c.OpenAPI = schemaDiscovery.RESTClient()
	}
	return c, nil
}
