package apply

import (
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/schema"
)

// Clients are what an Applier talks to the cluster with: the clients and
// retry rule of pkg/cluster, and what the Applier does with them.
type Clients struct {
	cluster.Clients
	// MergeKeys are user-declared keys for lists the schemas leave atomic.
	MergeKeys []schema.Override
	// Parallel bounds how many objects a run of the Applier writes at once
	// (default DefaultParallel).
	Parallel int
	// SharedSchemas, when set, are the OpenAPI documents the Appliers of
	// the same command over other contexts parsed, shared by the hash the
	// server lists (schema.SharedDocuments); nil: each run parses its own.
	SharedSchemas *schema.SharedDocuments
}

// NewClients builds the clients of cfg (cluster.NewClients); mergeKeys are
// the user-declared keys for lists the schemas leave atomic.
func NewClients(cfg *rest.Config, mapper meta.RESTMapper, schemaDiscovery discovery.CachedDiscoveryInterface, mergeKeys []schema.Override) (Clients, error) {
	c, err := cluster.NewClients(cfg, mapper, schemaDiscovery)
	return Clients{Clients: c, MergeKeys: mergeKeys}, err
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
