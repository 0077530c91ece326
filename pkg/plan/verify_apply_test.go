package plan

import (
	"errors"
	"testing"
)

// TestVerifyServerSideApplyWithADryRun: a server-side apply item whose
// dry run changed nothing records no changes; with its dry run, that is a
// known answer and a move of status passes (new resourceVersion), and a
// change of the record is still refused. Without a dry run nothing says
// what it was approved against: refused.
func TestVerifyServerSideApplyWithADryRun(t *testing.T) {
	planned := liveDeployment(t, nil)
	it, err := NewServerSide(planned, planned, Source{})
	if err != nil {
		t.Fatal(err)
	}
	statusMoved := liveDeployment(t, set([]string{"status", "readyReplicas"}, int64(0)))
	if _, err := it.Verify(statusMoved); !errors.Is(err, ErrChanged) {
		t.Errorf("without a dry run: %v, want refused", err)
	}
	it.DryRunResult = planned.Object
	if rv, err := it.Verify(statusMoved); err != nil || rv != "50" {
		t.Errorf("with a dry run: rv %q, %v; want 50", rv, err)
	}
	recordMoved := liveDeployment(t, set([]string{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, "{}"))
	if _, err := it.Verify(recordMoved); !errors.Is(err, ErrChanged) {
		t.Errorf("record changed: %v, want refused", err)
	}
}
