package check

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// paramKind is a policy's param kind, read once per check: every param
// object listed into an indexer that generic.CollectParams reads as the
// plugin reads its informer's.
type paramKind struct {
	informer informers.GenericInformer
	scope    meta.RESTScope
}

// listedInformer is a GenericInformer over a list read once. Only the
// lister and HasSynced are used by generic.CollectParams; the informer
// never runs (a check reads the cluster once, and needs no watch
// permission).
type listedInformer struct {
	lister cache.GenericLister
}

func (l listedInformer) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (l listedInformer) Lister() cache.GenericLister         { return l.lister }

// syncedInformer answers HasSynced: its list was read before the check.
// Any other method panics (nil embedded interface): CollectParams calls
// none.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }

func newListedInformer(indexer cache.Indexer, resource schema.GroupResource) listedInformer {
	return listedInformer{lister: cache.NewGenericLister(indexer, resource)}
}
