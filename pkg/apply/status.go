package apply

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/wait"
)

// State says where an object stands with apply.
type State string

// Object states.
const (
	// StateApplied: the object has a last-applied record.
	StateApplied State = "applied"
	// StateMissing: the object is not on the server.
	StateMissing State = "missing"
	// StateNoRecord: the object exists without a last-applied record.
	StateNoRecord State = "no-record"
)

// ObjectStatus is the drift of one object from its last apply, as
// `kapply status -o json` prints it.
type ObjectStatus struct {
	Object string `json:"object"`
	Source string `json:"source"`
	State  State  `json:"state"`
	// Drift is set in StateApplied.
	*ownership.Drift
	// Health is the live object's readiness, as apply --wait computes it;
	// nil when the object is not on the server.
	Health *Health `json:"health,omitempty"`
	// Warnings are the server's warnings about the object's requests,
	// Secret values masked.
	Warnings []string `json:"-"`
}

// Health is an object's readiness by kstatus: Current, InProgress, Failed,
// Terminating or Unknown, with the reason and message of the condition
// that explains a status other than Current.
type Health struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// HealthOf computes obj's health (see wait.ComputeStatus).
func HealthOf(obj *unstructured.Unstructured) *Health {
	s, reason, message := wait.ComputeStatus(obj)
	return &Health{Status: string(s), Reason: reason, Message: message}
}

// Status reads each object's live object and finds the fields changed
// since the last apply and the fields of the object given that other
// managers own; the fields of opts.FieldManager and of the client-side
// apply managers (kubectl's, the record's, kapply's legacy one) are not
// foreign. kubectl's server-side manager, "kubectl", is not among them by
// default: kubectl scale and edit write under the same name. The first
// object that cannot be read is the error.
func (a *Applier) Status(ctx context.Context, in Input, opts StatusOptions) ([]ObjectStatus, error) {
	objects, err := in.readAll()
	if err != nil {
		return nil, err
	}
	r, err := a.ownershipRunner(ctx, opts.Namespace, RecordWrite{FieldManager: opts.FieldManager})
	if err != nil {
		return nil, err
	}
	r.know(in.Objects...)
	r.keys.readOnly = true // status compares, and writes no key
	appliers := []string{r.opts.FieldManager, ClientSideFieldManager, lastAppliedFieldManager, LegacyFieldManager}
	out := make([]ObjectStatus, 0, len(objects))
	for _, o := range objects {
		objCtx, sink := withWarningSink(ctx)
		s, err := r.status(objCtx, o, appliers, opts.FilterDrift)
		if err != nil {
			return nil, r.maskError(errorOf(o, err))
		}
		s.Warnings = r.secrets.Texts(sink.texts())
		out = append(out, s)
	}
	return out, nil
}

func (r *runner) status(ctx context.Context, o *object, appliers []string, filterDrift func(live, file *unstructured.Unstructured, d *ownership.Drift)) (ObjectStatus, error) {
	if err := r.prepare(ctx, o); err != nil {
		return ObjectStatus{}, err
	}
	s := ObjectStatus{Object: o.Name(), Source: o.Source.File}
	live, err := r.getLive(ctx, o)
	if errors.Is(err, ErrNotFound) {
		s.State = StateMissing
		return s, nil
	}
	if err != nil {
		return s, err
	}
	r.know(live)
	s.Health = HealthOf(live)
	owners, err := ownership.Owners(live)
	if err != nil {
		return s, err
	}
	kind, err := r.schemas.Kind(live.GroupVersionKind())
	if err != nil {
		return s, fmt.Errorf("reading the schema: %w", err)
	}
	if err := r.keyObject(ctx, o); err != nil {
		return s, err
	}
	s.Drift, err = ownership.FindDrift(live, o.Obj, kind, owners, appliers, o.key)
	if err == nil && filterDrift != nil {
		filterDrift(live, o.Obj, s.Drift)
	}
	if errors.Is(err, lastapplied.ErrNoRecord) {
		s.State = StateNoRecord
		return s, nil
	}
	s.State = StateApplied
	return s, err
}
