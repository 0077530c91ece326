package apply

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
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
	// their answers are decoded once instead of twice over (see
	// decodeList, rawwrite.go). Without it, they go through Dynamic.
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
	// publishes. Nil: the run's CRDs, the server's CRDs and MergeKeys only.
	OpenAPI rest.Interface
	// MergeKeys are user-declared keys for lists the schemas leave atomic.
	MergeKeys []schema.Override
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
	// Parallel bounds how many objects a run of the Applier writes at once
	// (default DefaultParallel).
	Parallel int
}

// NewClients builds the clients of cfg with kapply's transport rules: an
// answer's Retry-After is left to the run's one retry bound instead of
// client-go's own retries, and the server's warnings go to the event of the
// object whose request drew them. mapper and schemaDiscovery (which serves
// the OpenAPI documents through its REST client) are usually cached ones;
// mergeKeys are the user-declared keys for lists the schemas leave atomic.
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
	// The reachability check goes through the same transport, so that its
	// retries follow the run's rule too.
	version, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("creating discovery client: %w", err)
	}
	c := Clients{Dynamic: dyn, Lists: lists, Mapper: mapper, MergeKeys: mergeKeys, Discovery: version, Host: cfg.Host, RequestTimeout: cfg.Timeout}
	if schemaDiscovery != nil {
		c.OpenAPI = schemaDiscovery.RESTClient()
	}
	return c, nil
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
// pruning and readiness waits as Options ask. It keeps no answer of the
// server's between runs (see runAnswers); one Applier serves any number of
// Apply and Delete calls, one after another or at once.
type Applier struct {
	clients Clients
	// builtins is built once: it is the same for every run.
	builtins func() (*runtime.Scheme, error)
	// ran is set by the first run. The mapper's answers from before it
	// are the caller's (kubectl's disk cache, read once per process);
	// every later run forgets the earlier runs' answers first.
	ran atomic.Bool
}

// NewApplier returns an Applier that talks to the cluster through c.
func NewApplier(c Clients) *Applier {
	return &Applier{clients: c, builtins: sync.OnceValues(builtinScheme)}
}
