package prune

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Candidate is a live object pruning would delete.
type Candidate struct {
	Mapping *meta.RESTMapping
	Live    *unstructured.Unstructured
}

// neverPrunedImplicitly are the kinds whose deletion takes everything in them
// or data with them; kubectl's old prune deleted them on a label match.
var neverPrunedImplicitly = sets.New(schema.GroupKind{Kind: "Namespace"}, schema.GroupKind{Kind: "PersistentVolume"})

// Select splits the candidates the run did not declare into those to
// delete and those protected: Namespaces and PersistentVolumes, deleted
// only when allowProtected (an allowlist that names them).
func Select(found []Candidate, keep Declared, allowProtected bool) (remove, protected []Candidate) {
	for _, c := range found {
		switch {
		case keep.Has(c.Live):
		case neverPrunedImplicitly.Has(c.Mapping.GroupVersionKind.GroupKind()) && !allowProtected:
			protected = append(protected, c)
		default:
			remove = append(remove, c)
		}
	}
	return remove, protected
}

// Run is what a run did, as far as pruning's refusal depends on it.
type Run struct {
	// LoadErrors counts the files or objects that could not be loaded.
	LoadErrors int
	// Unmapped counts the objects that could not be mapped to a resource.
	Unmapped int
	// Failed counts the objects that failed to apply.
	Failed int
	// Objects counts the objects loaded.
	Objects int
}

// Refusal says why pruning may not run at all after run: files that could
// not be loaded (their objects would look dropped), objects that failed to
// apply, or no objects and no AllowEmpty. nil: pruning may run.
func (o Options) Refusal(run Run) error {
	switch {
	case o.Selector == "" && o.ApplySet == "" && !o.All:
		return fmt.Errorf("not pruning: neither a selector nor an ApplySet limits what is pruned, which would delete every allowlisted object the input does not declare; set prune.Options.All to mean it (kubectl's --all)")
	case run.LoadErrors > 0:
		return fmt.Errorf("not pruning: %d file(s) or object(s) could not be loaded, and what they declare would be deleted", run.LoadErrors)
	case run.Unmapped > 0:
		// Their identity (namespace, even kind) is unsettled: the live
		// object could look undeclared and be deleted.
		return fmt.Errorf("not pruning: %d object(s) could not be mapped to a resource, and their live copies could look undeclared", run.Unmapped)
	case run.Failed > 0:
		// As kubectl: a failed object may be the successor of one the files
		// dropped (a rename); pruning now would leave neither. An ApplySet
		// parent keeps the superset written before applying.
		return fmt.Errorf("not pruning: %d object(s) failed to apply; nothing is deleted until a run applies every object", run.Failed)
	case run.Objects == 0 && !o.AllowEmpty:
		return fmt.Errorf("not pruning: no objects were loaded, which would delete every member; set prune.Options.AllowEmpty to mean it")
	}
	return nil
}

// defaultAllowlist is kubectl's list of kinds its old prune considers,
// less Namespace and PersistentVolume, which kapply prunes only when the
// allowlist names them.
var defaultAllowlist = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Endpoints"},
	{Version: "v1", Kind: "PersistentVolumeClaim"}, {Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "ReplicationController"}, {Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"}, {Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"}, {Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
}

// AllowedKinds maps the Allowlist (group/version/kind, "core" for the core
// group), or kubectl's default list, to resources. explicit reports a
// user list, which may name the protected kinds (see Select).
func (o Options) AllowedKinds(mapper meta.RESTMapper) (mappings []*meta.RESTMapping, explicit bool, err error) {
	gvks := defaultAllowlist
	if len(o.Allowlist) > 0 {
		gvks, explicit = nil, true
		for _, entry := range o.Allowlist {
			parts := splitGVK(entry)
			if parts == nil {
				return nil, false, fmt.Errorf("prune.Options.Allowlist %q: want group/version/kind, e.g. core/v1/ConfigMap or apps/v1/Deployment", entry)
			}
			gvks = append(gvks, *parts)
		}
	}
	for _, gvk := range gvks {
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, false, fmt.Errorf("prune allowlist entry %s: %w", gvk, err)
		}
		mappings = append(mappings, mapping)
	}
	return mappings, explicit, nil
}

func splitGVK(s string) *schema.GroupVersionKind {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return nil
	}
	if parts[0] == "core" {
		parts[0] = ""
	}
	return &schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}
}
