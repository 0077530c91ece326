package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/plan"
)

// TestApplyPlanRefusesAPlanWithoutItsReplacedValues: a plan edited to
// drop what it records of the lists its patches replace whole (replaced)
// no longer guards them against another writer's element added between
// the check and the write; re-encoded with a valid checksum, it is
// refused as tampered before anything is written (it ran before: the
// re-plan compared action, target and patch only).
func TestApplyPlanRefusesAPlanWithoutItsReplacedValues(t *testing.T) {
	w := newWholeWorld(t)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", w.dir, "-n", w.ns, "-o", planFile)
	p := readPlanFile(t, planFile)
	dropped := 0
	for i := range p.Items {
		dropped += len(p.Items[i].Replaced)
		p.Items[i].Replaced = nil
	}
	if dropped == 0 {
		t.Fatal("the plan records no replaced values to drop")
	}
	edited := filepath.Join(t.TempDir(), "edited.json")
	f, err := os.Create(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Encode(f, p); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := kapply(t, "apply", "--plan", edited, "-f", w.dir, "-n", w.ns)
	if r.code != exitFailed || !strings.Contains(r.stderr, "does not record the live value") || !strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("a plan without its replaced values: exit %d, want %d refusing it as tampered\nstdout %s\nstderr %s", r.code, exitFailed, r.stdout, r.stderr)
	}
	if got := w.byName(t); got != `{"a":"a1"}` {
		t.Errorf("the Widget's list %s, want it as it was: nothing written", got)
	}
}
