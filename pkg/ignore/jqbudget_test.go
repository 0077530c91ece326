package ignore

import (
	"strings"
	"testing"
	"time"

	"github.com/kapply/kapply/pkg/plan"
)

// TestJQNeverYieldingSpendsOneBudgetPerRun: an expression that never
// yields met its 5 s bound on every object (40 objects: 31 s) and the diff
// never said so. The rules of one run share one budget; a rule that ran
// out of it is not run again, and TimedOut names it.
func TestJQNeverYieldingSpendsOneBudgetPerRun(t *testing.T) {
	hangs, err := ParseFlag("kind=ConfigMap,jq=.data.k, (def forever: forever; forever)", 1)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ParseFlag("kind=Secret,jq=.data.k", 2)
	if err != nil {
		t.Fatal(err)
	}
	var rs Rules
	if err := rs.Add(hangs, plain); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range 40 {
		id := plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c" + strings.Repeat("x", i)}
		obj := map[string]any{"kind": "ConfigMap", "data": map[string]any{"k": "v"}}
		rs.Strip(id, nil, obj)
	}
	if took := time.Since(start); took > jqTimeout+2*time.Second {
		t.Errorf("40 objects took %s, want about one budget (%s)", took, jqTimeout)
	}
	timedOut := rs.TimedOut()
	if len(timedOut) != 1 || timedOut[0] != hangs {
		t.Fatalf("TimedOut = %v, want only the rule that never yields", timedOut)
	}
	if msg := timedOut[0].TimeoutError().Error(); !strings.Contains(msg, "--ignore #1") {
		t.Errorf("the error does not name the rule: %s", msg)
	}
}
