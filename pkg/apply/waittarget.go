package apply

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
)

// WaitTarget is one object to wait for: its API resource, namespace (empty
// for cluster-scoped objects) and name.
type WaitTarget struct {
	Mapping   *meta.RESTMapping
	Namespace string
	Name      string
	// UID is the object applied, when known: an object of the same name
	// with another UID was created after it was deleted, and is not it.
	UID types.UID
}

// Ref names the target as kubectl's name printer does: kind.group/name.
func (t WaitTarget) Ref() string {
	gk := t.Mapping.GroupVersionKind.GroupKind()
	ref := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		ref += "." + gk.Group
	}
	return ref + "/" + t.Name
}

// WaitTargets are the objects the events applied (created, configured or
// unchanged), in the events' order, with their places in events.
func WaitTargets(events []Event) (targets []WaitTarget, places []int) {
	for i, ev := range events {
		switch ev.Outcome {
		case Created, Configured, Unchanged:
		default:
			continue
		}
		if ev.Object == nil || ev.Mapping == nil {
			continue
		}
		ns := ""
		if ev.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = ev.Object.GetNamespace()
			if ev.Result != nil && ev.Result.GetNamespace() != "" {
				ns = ev.Result.GetNamespace()
			}
		}
		t := WaitTarget{Mapping: ev.Mapping, Namespace: ns, Name: ev.Object.GetName()}
		if ev.Result != nil {
			t.UID = ev.Result.GetUID()
		}
		targets = append(targets, t)
		places = append(places, i)
	}
	return targets, places
}
