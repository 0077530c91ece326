package delete

import (
	"errors"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/cluster"
)

// TestOrderDeletesDependentsFirst: objects go before the CRDs of their
// kinds, which go before the Namespaces; each group in input order.
func TestOrderDeletesDependentsFirst(t *testing.T) {
	cm := schema.GroupKind{Kind: "ConfigMap"}
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	got := Order([]schema.GroupKind{namespaceGK, crdGK, cm, widget, namespaceGK})
	if want := [][]int{{2, 3}, {1}, {0, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestRequestOptions: cascade, UID and resourceVersion preconditions,
// grace period and dry run reach the DELETE's options.
func TestRequestOptions(t *testing.T) {
	grace := int64(5)
	opts := Request{Cascade: metav1.DeletePropagationForeground, UID: "u1", ResourceVersion: "7", GracePeriod: &grace, DryRun: cluster.ServerDryRun}.Options()
	if *opts.PropagationPolicy != metav1.DeletePropagationForeground || *opts.Preconditions.UID != "u1" ||
		*opts.Preconditions.ResourceVersion != "7" || *opts.GracePeriodSeconds != 5 || len(opts.DryRun) != 1 || opts.DryRun[0] != metav1.DryRunAll {
		t.Errorf("options %+v", opts)
	}
	if opts := (Request{DryRun: cluster.ClientDryRun}).Options(); opts.PropagationPolicy != nil || opts.Preconditions != nil ||
		opts.GracePeriodSeconds != nil || opts.DryRun != nil {
		t.Errorf("empty request: %+v", opts)
	}
}

// TestGoneAlready: only a 404 counts, and only after a lost answer or
// while pruning.
func TestGoneAlready(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "a")
	if GoneAlready(notFound, false, false) || !GoneAlready(notFound, true, false) || !GoneAlready(notFound, false, true) ||
		GoneAlready(errors.New("refused"), true, true) {
		t.Error("GoneAlready misjudges")
	}
}
