package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/history"
)

// TestHistoryTimingAtAThousandObjects times apply --prune --applyset of
// 1000 ConfigMaps (created, then each changed) with history
// (--history-limit 10) and without (0), interleaved, three rounds; it
// runs only with KAPPLY_HISTORY_TIMING=1 (minutes on a loaded machine) and
// logs the ratio. The bound is 10%.
func TestHistoryTimingAtAThousandObjects(t *testing.T) {
	if os.Getenv("KAPPLY_HISTORY_TIMING") != "1" {
		t.Skip("set KAPPLY_HISTORY_TIMING=1 to time history at 1000 objects")
	}
	testcluster.Require(t, cluster)
	files := func(version int) string {
		f := map[string]string{}
		for i := range 1000 {
			f[fmt.Sprintf("cm%04d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%04d}\ndata: {v: \"%d\", i: \"%d\"}\n", i, version, i)
		}
		return writeFiles(t, f)
	}
	v1, v2 := files(1), files(2)
	total := map[string]time.Duration{}
	for round := range 3 {
		for _, limit := range []string{"0", "10"} {
			ns := cluster.Namespace(t)
			for _, dir := range []string{v1, v2} {
				start := time.Now()
				mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=big", "--history-limit", limit)
				took := time.Since(start)
				total[limit] += took
				t.Logf("round %d, --history-limit %s: %v", round, limit, took)
			}
			revs, err := history.Revisions(historyObjects(t, historySecrets, ns, "big"))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{"0": 0, "10": 2}[limit]; len(revs) != want {
				t.Fatalf("--history-limit %s: %d revisions, want %d", limit, len(revs), want)
			}
		}
	}
	t.Logf("without history %v, with %v: ratio %.3f", total["0"], total["10"], float64(total["10"])/float64(total["0"]))
}
