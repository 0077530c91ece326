package check

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/kapply/kapply/pkg/plan"
)

// parallel bounds the items checked at once: each may read its live object.
const parallel = 8

// Plan sets the verdicts of every item of p that writes. An item that
// cannot be checked (its kind unknown to the server, its live object
// unreadable) is an error naming it.
func (c *Checker) Plan(ctx context.Context, p *plan.Plan) error {
	live, err := c.readLive(ctx, p)
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i := range p.Items {
		it := &p.Items[i]
		g.Go(func() error {
			verdicts, err := c.item(ctx, *it, live)
			if err != nil {
				return fmt.Errorf("checking %s against admission policies: %w", it.ID, err)
			}
			it.Verdicts = verdicts
			return nil
		})
	}
	return g.Wait()
}

// Item returns the verdicts on one item.
func (c *Checker) Item(ctx context.Context, it plan.Item) ([]plan.Verdict, error) {
	return c.item(ctx, it, nil)
}

// item checks it; live holds the live objects read for the whole plan
// (readLive), else the item's is read alone.
func (c *Checker) item(ctx context.Context, it plan.Item, live map[plan.ID]map[string]any) ([]plan.Verdict, error) {
	op, ok := operations[it.Action]
	if !ok {
		return nil, nil // unchanged: nothing is sent
	}
	if op == admission.Create && it.Action == plan.Apply && it.UID != "" {
		op = admission.Update
	}
	if op != admission.Delete && it.Merged == nil {
		return []plan.Verdict{{Outcome: plan.Unknown, Message: "the plan holds no merged object for the item (a saved plan): plan it with --check"}}, nil
	}
	gvk := schema.GroupVersionKind{Group: it.ID.Group, Version: it.ID.Version, Kind: it.ID.Kind}
	mapping, err := c.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if excluded[mapping.Resource.GroupResource()] {
		return nil, nil
	}
	var old map[string]any
	if op != admission.Create {
		if old = live[it.ID]; old == nil {
			obj, err := c.clients.Dynamic.Resource(mapping.Resource).Namespace(it.ID.Namespace).Get(ctx, it.ID.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading the live object: %w", err)
			}
			old = obj.Object
		}
	}
	var object map[string]any
	if op != admission.Delete {
		object = it.Merged
	}
	attrs := admission.NewAttributesRecord(asObject(object), asObject(old), gvk, it.ID.Namespace, it.ID.Name,
		mapping.Resource, it.Subresource, op, operationOptions(op), false, c.user)
	req := request{attrs: attrs, versioned: map[schema.GroupVersionKind]*admission.VersionedAttributes{}}
	// The server gives a Namespace no namespaceObject (its own namespace
	// would be itself).
	if ns := it.ID.Namespace; ns != "" && !(gvk.Group == "" && gvk.Kind == "Namespace") {
		if req.namespace, err = c.namespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	verdicts, err := c.checkItem(ctx, req)
	if gvk.Group == "" && gvk.Kind == "Secret" {
		// A messageExpression may quote the Secret's values: the plan
		// and the output never hold them.
		for i := range verdicts {
			verdicts[i].Message = "(the message is withheld: the object is a Secret)"
		}
	}
	return verdicts, err
}

// namespace is a request's namespaceObject. One the plan creates is not
// yet in the cluster: the server would see it created first, so the
// object the plan sends stands in for it.
func (c *Checker) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := c.matcher.GetNamespace(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return ns, nil
}

var operations = map[plan.Action]admission.Operation{
	plan.Create: admission.Create, plan.Update: admission.Update, plan.Apply: admission.Create,
	plan.Prune: admission.Delete, plan.Delete: admission.Delete,
}

// excluded are the kinds the server evaluates no ValidatingAdmissionPolicy
// on (generic.Plugin: the admission configuration's own).
var excluded = map[schema.GroupResource]bool{
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       true,
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: true,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}:         true,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}:   true,
}
