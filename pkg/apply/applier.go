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
	// and the creates and patches of an apply (a REST client of
	// dynamic.ConfigFor, as the dynamic client has, on the same transport):
	// their answers are decoded once by jsonmap instead of twice over (see
	// decodeList, rawwrite.go). Without it, they go through Dynamic.
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
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = sharedRateLimiter(cfg)
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

// sharedRateLimiter is the limiter client-go would give each client built
// from cfg, with its defaults for a zero QPS or burst (nil: none), so that
// every client of the run draws on one limit: each would otherwise get its
// own, and the run could send --qps requests a second per client.
func sharedRateLimiter(cfg *rest.Config) flowcontrol.RateLimiter {
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps <= 0 {
		return nil
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, burst)
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
