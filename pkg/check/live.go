package check

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/plan"
)

// listAbove is the number of items of one kind and namespace above which
// their live objects are listed at once rather than read one by one.
const listAbove = 4

// readLive reads the live objects of the plan's updates and deletions
// (their requests' oldObject) with one LIST per kind and namespace where
// several share them; the others are read by the item itself.
func (c *Checker) readLive(ctx context.Context, p *plan.Plan) (map[plan.ID]map[string]any, error) {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	counts := map[group]int{}
	for _, it := range p.Items {
		if op, ok := operations[it.Action]; ok && (op != "CREATE" || it.UID != "") {
			counts[group{schema.GroupVersionKind{Group: it.ID.Group, Version: it.ID.Version, Kind: it.ID.Kind}, it.ID.Namespace}]++
		}
	}
	live := map[plan.ID]map[string]any{}
	for g, n := range counts {
		if n <= listAbove {
			continue
		}
		mapping, err := c.clients.Mapper.RESTMapping(g.gvk.GroupKind(), g.gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", g.gvk, err)
		}
		list, err := c.clients.Dynamic.Resource(mapping.Resource).Namespace(g.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading the live %s of namespace %q: %w", mapping.Resource.Resource, g.namespace, err)
		}
		for _, obj := range list.Items {
			id := plan.ID{Group: g.gvk.Group, Version: g.gvk.Version, Kind: g.gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
			obj.SetAPIVersion(g.gvk.GroupVersion().String())
			obj.SetKind(g.gvk.Kind)
			live[id] = obj.Object
		}
	}
	return live, nil
}
