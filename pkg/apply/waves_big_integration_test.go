package apply_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
)

// TestTenThousandObjectsInAHundredWaves measures 10,000 ConfigMaps in 100 sync-waves against
// the same without waves, and logs the figures (KAPPLY_BIG_WAVES=1 only:
// minutes of a loaded server). Review of issue 36: 17 s / 310 MB without
// waves, 71 s / 3.9 GB with 100 (each wave's phase LISTs the namespace).
func TestTenThousandObjectsInAHundredWaves(t *testing.T) {
	if os.Getenv("KAPPLY_BIG_WAVES") == "" {
		t.Skip("KAPPLY_BIG_WAVES not set")
	}
	for _, waves := range []int{0, 100} {
		w := newPlanWorld(t, fmt.Sprintf("big-waves-%d", waves))
		objects := make([]*unstructured.Unstructured, 10000)
		for i := range objects {
			objects[i] = w.configMap(fmt.Sprintf("cm-%05d", i), map[string]any{"k": "v"})
			if waves > 0 {
				objects[i] = inWave(objects[i], fmt.Sprint(i%waves))
			}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		p, err := w.applier.Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		planTook := time.Since(start)
		start = time.Now()
		events, err := w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		applyTook := time.Since(start)
		runtime.ReadMemStats(&after)
		failOnFailures(t, events)
		t.Logf("waves %d: plan %v (%d gates), apply %v, allocated %d MB, heap now %d MB", waves, planTook, len(p.Gates), applyTook,
			(after.TotalAlloc-before.TotalAlloc)>>20, after.HeapAlloc>>20)
	}
}
