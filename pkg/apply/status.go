package apply

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/schema"
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
}

// Health is an object's readiness by kstatus: Current, InProgress, Failed,
// Terminating or Unknown, with the reason and message of the condition
// that explains a status other than Current.
type Health struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// HealthOf computes obj's health (see ComputeStatus).
func HealthOf(obj *unstructured.Unstructured) *Health {
	s, reason, message := ComputeStatus(obj)
	return &Health{Status: string(s), Reason: reason, Message: message}
}

// Status reads t's live object and finds the fields changed since the last
// apply and the fields of the file other managers own; the fields of
// fieldManager and of the client-side apply managers (kubectl's, the
// record's, kapply's legacy one) are not foreign. kubectl's server-side
// manager, "kubectl", is not among them by default: kubectl scale and edit
// write under the same name.
func Status(ctx context.Context, t *load.Object, resolver *schema.Resolver, fieldManager string) (ObjectStatus, error) {
	s, err := status(ctx, t, resolver, []string{fieldManager, ClientSideFieldManager, lastAppliedFieldManager, LegacyFieldManager})
	return s, load.ErrorOf(t, err)
}

func status(ctx context.Context, t *load.Object, resolver *schema.Resolver, appliers []string) (ObjectStatus, error) {
	s := ObjectStatus{Object: t.Name(), Source: t.Source}
	live, err := getLive(ctx, t)
	if errors.Is(err, ErrNotFound) {
		s.State = StateMissing
		return s, nil
	}
	if err != nil {
		return s, err
	}
	s.Health = HealthOf(live)
	owners, err := ownership.Owners(live)
	if err != nil {
		return s, err
	}
	kind, err := resolver.Kind(live.GroupVersionKind())
	if err != nil {
		return s, fmt.Errorf("reading the schema: %w", err)
	}
	s.Drift, err = ownership.FindDrift(live, t.Obj, kind, owners, appliers)
	if errors.Is(err, lastapplied.ErrNoRecord) {
		s.State = StateNoRecord
		return s, nil
	}
	s.State = StateApplied
	return s, err
}
