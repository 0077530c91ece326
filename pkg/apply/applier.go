package apply

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kapply/kapply/pkg/schema"
)

// Clients are what an Applier talks to the cluster with.
type Clients struct {
	Dynamic dynamic.Interface
	// Lists, when set, serves the LISTs that read many live objects at once
	// (a REST client of dynamic.ConfigFor, as the dynamic client has): their
	// items are decoded one by one instead of the whole list twice over (see
	// decodeList). Without it, LISTs go through Dynamic.
	Lists  rest.Interface
	Mapper meta.RESTMapper
	// Schemas gives each kind its merge strategies.
	Schemas *schema.Resolver
	// Discovery answers the check that the server is reachable, made once
	// before any write (GET /version); nil skips the check.
	Discovery discovery.DiscoveryInterface
	// Host names the server in errors.
	Host string
	// RequestTimeout, when set, bounds each request; a retry window longer
	// than it is shortened to it.
	RequestTimeout time.Duration
}

// NewClients builds the clients of cfg with kapply's transport rules: an
// answer's Retry-After is left to the run's one retry bound instead of
// client-go's own retries, and the server's warnings go to the event of the
// object whose request drew them. mapper and schemaDiscovery (which serves
// the OpenAPI documents) are usually cached ones; mergeKeys are the
// user-declared keys for lists the schemas leave atomic.
func NewClients(cfg *rest.Config, mapper meta.RESTMapper, schemaDiscovery discovery.CachedDiscoveryInterface, mergeKeys []schema.Override) (Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// One limit for every client built here (dynamic, Lists, the
		// reachability check): each would otherwise get its own bucket,
		// and the run could send --qps requests a second per client.
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	cfg.Wrap(takeRetryAfter)
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
	schemas, err := newResolver(schemaDiscovery, mergeKeys)
	if err != nil {
		return Clients{}, err
	}
	// The reachability check goes through the same transport, so that its
	// retries follow the run's rule too.
	version, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("creating discovery client: %w", err)
	}
	return Clients{Dynamic: dyn, Lists: lists, Mapper: mapper, Schemas: schemas, Discovery: version, Host: cfg.Host, RequestTimeout: cfg.Timeout}, nil
}

// Applier applies objects to one cluster: for each, the three-way merge of
// its last-applied record, the object given and the live object, sent as
// a patch (or a server-side apply), concurrently, in dependency order, with
// pruning and readiness waits as Options ask. It holds no state between
// runs; one Applier serves any number of Apply and Delete calls.
type Applier struct {
	clients Clients
}

// NewApplier returns an Applier that talks to the cluster through c.
func NewApplier(c Clients) *Applier { return &Applier{clients: c} }
