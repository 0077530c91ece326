package apply

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/ignore"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// itemKeyOf is the item's object's identity without its kind's version
// (see objectKey): the same object whatever version names it.
func itemKeyOf(id plan.ID) objectKey {
	return objectKey{gk: k8sschema.GroupKind{Group: id.Group, Kind: id.Kind}, namespace: id.Namespace, name: id.Name}
}

// fileIndex holds the files' objects an executed plan is checked against:
// settled (namespace as a run gives it) where the server serves their
// kind, else as written (custom resources of a CRD the plan creates).
type fileIndex struct {
	settled   map[objectKey]*object
	unsettled []*object
	all       []*object
	namespace string
}

// indexFiles prepares the files' objects (in place, as a run does); a kind
// the server does not serve is looked up once.
func (r *runner) indexFiles(ctx context.Context, in Input) (*fileIndex, error) {
	objects, err := in.objects()
	if err != nil {
		return nil, err
	}
	x := &fileIndex{settled: map[objectKey]*object{}, all: objects, namespace: r.opts.Namespace}
	unserved := map[k8sschema.GroupVersionKind]bool{}
	for _, o := range objects {
		gvk := o.Obj.GroupVersionKind()
		if unserved[gvk] {
			x.unsettled = append(x.unsettled, o)
			continue
		}
		if err := r.prepare(ctx, o); err != nil {
			if meta.IsNoMatchError(err) {
				unserved[gvk] = true
				x.unsettled = append(x.unsettled, o)
			}
			continue // no name: it names nothing an item could
		}
		key := itemKeyOf(plan.IDOf(o.Obj))
		if _, dup := x.settled[key]; !dup {
			x.settled[key] = o
		}
	}
	return x, nil
}

// label gives every object the ApplySet's label, as Plan did.
func (x *fileIndex) label(set *prune.Set) {
	if set == nil {
		return
	}
	for _, o := range x.all {
		labels := o.Obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[prune.PartOfLabel] = set.ID()
		o.Obj.SetLabels(labels)
	}
}

// declares finds the files' object of a create, patch or apply item, or
// says why there is none; a removal must name an object the files do not
// declare, in any version.
func (x *fileIndex) declares(it plan.Item, removal bool) (*object, string) {
	o := x.find(itemKeyOf(it.ID))
	switch {
	case removal && o != nil:
		return nil, "it is to be deleted, but the files declare it"
	case removal:
		return nil, ""
	case o == nil:
		return nil, "no file declares it (give the files the plan was made from as the files' objects (ExecuteOptions.Objects), with the namespace it was made with)"
	case o.Obj.GetAPIVersion() != (k8sschema.GroupVersion{Group: it.ID.Group, Version: it.ID.Version}).String():
		return nil, fmt.Sprintf("the files declare it as apiVersion %s", o.Obj.GetAPIVersion())
	}
	return o, ""
}

func (x *fileIndex) find(key objectKey) *object {
	if o, ok := x.settled[key]; ok {
		return o
	}
	for _, o := range x.unsettled {
		ns := o.Obj.GetNamespace()
		same := o.Obj.GetName() == key.name && o.Obj.GroupVersionKind().GroupKind() == key.gk
		// Not settled: a namespace left out is the run's, and a
		// cluster-scoped kind's is dropped.
		if same && (ns == key.namespace || key.namespace == "" || ns == "" && key.namespace == x.namespace) {
			return o
		}
	}
	return nil
}

// inNamespace is a copy of o settled in ns, for an object whose kind the
// server does not serve yet.
func (o *object) inNamespace(ns string) *object {
	out := *o
	out.Obj = o.Obj.DeepCopy()
	out.Obj.SetNamespace(ns)
	return &out
}

// definedByPlan are the kinds of the CRDs the plan creates or changes:
// each CRD item's object as the plan keeps it, or as the files give it.
func definedByPlan(p *plan.Plan, files *fileIndex) map[k8sschema.GroupKind]bool {
	out := map[k8sschema.GroupKind]bool{}
	for _, it := range p.Items {
		if (k8sschema.GroupKind{Group: it.ID.Group, Kind: it.ID.Kind}) != crdGK {
			continue
		}
		body := it.Merged
		if it.Action == plan.Apply {
			body, _ = decodeObject(it.Patch.Data) // unreadable: defines nothing
		}
		if body == nil && it.Action != plan.Prune && it.Action != plan.Delete {
			if file := files.find(itemKeyOf(it.ID)); file != nil {
				body = file.Obj.Object
			}
		}
		if body != nil {
			out[definedKind(&object{Obj: &unstructured.Unstructured{Object: body}})] = true
		}
	}
	return out
}

// replan is the item the planner makes of file against live (nil: absent)
// in the item's way of writing: a patch item's kept fields (keptLive) at
// their live values, as the plan's ignore rules made the file; a create
// salted as the plan's object, so that a Secret's record comes out the same.
func (r *runner) replan(ctx context.Context, it plan.Item, file *object, live *unstructured.Unstructured) (plan.Item, error) {
	f := *file
	f.key = it.DigestKey // a Secret's record is digested under the plan's key
	if live != nil && len(it.KeptLive) > 0 {
		f.Obj = &unstructured.Unstructured{Object: ignore.KeepLive(file.Obj.Object, live.Object, it.KeptLive)}
	}
	var fresh plan.Item
	var err error
	switch it.Action {
	case plan.Create:
		fresh, _, err = r.planCreateSalted(&f, &unstructured.Unstructured{Object: it.Merged})
	case plan.Update:
		fresh, _, err = r.planPatch(&f, live)
	case plan.Apply:
		if it.Subresource != "" {
			fresh, _, err = r.planSubresource(&f, live)
			break
		}
		fresh, _, err = r.planServerSide(&f, live)
	default:
		err = fmt.Errorf("a %s item is not planned from a file", it.Action)
	}
	return fresh, err
}

// patchBody is the patch's body with rv as its precondition, decoded.
func patchBody(p plan.Patch, rv string) (any, error) {
	p, err := p.WithResourceVersion(rv)
	if err != nil {
		return nil, err
	}
	var body any
	err = sigsjson.UnmarshalCaseSensitivePreserveInts(p.Data, &body)
	return body, err
}

func decodeObject(data []byte) (map[string]any, error) {
	var body map[string]any
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &body)
	return body, err
}

// differing are the paths where a and b differ: maps are compared field
// by field, anything else whole.
func differing(a, b any) []fieldpath.Path {
	return fieldpath.CompareObjects(a, b, fieldpath.CompareOptions{Depth: fieldpath.ByField}).Paths()
}

// joinPaths names at most five paths, counting the rest.
func joinPaths(paths []fieldpath.Path) string {
	var names []string
	for i, p := range paths {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(paths)-i))
			break
		}
		name := p.String()
		if name == "" {
			name = "(the whole body)"
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// sameRecordBut takes the last-applied records out of both patch bodies
// and compares them but at the kept paths; "" when they agree.
func sameRecordBut(planned, given any, kept []fieldpath.Path) string {
	a, errA := takeRecord(planned)
	b, errB := takeRecord(given)
	if errA != nil || errB != nil {
		return "its last-applied record cannot be read"
	}
	for _, p := range kept {
		_ = p.Remove(a) // absent already: nothing to compare there
		_ = p.Remove(b)
	}
	if paths := differing(a, b); len(paths) > 0 {
		return "its last-applied record differs from the files' at " + joinPaths(paths)
	}
	return ""
}

// takeRecord removes the record annotations from a patch body and
// returns the record they hold (nil: none).
func takeRecord(body any) (map[string]any, error) {
	m, _ := body.(map[string]any)
	metadata, _ := m["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	taken := map[string]any{}
	for _, key := range []string{lastapplied.Annotation, lastapplied.CompactAnnotation} {
		if v, ok := annotations[key]; ok {
			taken[key] = v
			delete(annotations, key)
		}
	}
	if len(taken) == 0 {
		return nil, nil
	}
	return lastapplied.Read(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"annotations": taken}}})
}
