package apply

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestForEachLimitBoundsAndCoversAll checks the workers of forEachLimit:
// every index is handed to fn exactly once, never more than limit at a
// time, and limit calls do run at once when there is work for them (the
// workers are not serialised), for limits below, at and above the number
// of indexes, and for indexes that arrive while the workers run.
func TestForEachLimitBoundsAndCoversAll(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 4}, {1, 4}, {10, 1}, {50, 4}, {7, 16}, {200, 16}, {5, 0}} {
		indexes := rand.Perm(tc.n)
		for _, late := range []bool{false, true} {
			in := each(indexes)
			if late {
				ch := make(chan int)
				go func() {
					for _, i := range indexes {
						ch <- i
					}
					close(ch)
				}()
				in = ch
			}
			var mu sync.Mutex
			var seen []int
			var running, peak atomic.Int32
			forEachLimit(in, tc.limit, func(i int) {
				now := running.Add(1)
				for old := peak.Load(); now > old && !peak.CompareAndSwap(old, now); old = peak.Load() {
				}
				time.Sleep(time.Millisecond)
				running.Add(-1)
				mu.Lock()
				seen = append(seen, i)
				mu.Unlock()
			})
			slices.Sort(seen)
			want := slices.Sorted(slices.Values(indexes))
			if !slices.Equal(seen, want) {
				t.Errorf("n=%d limit=%d late=%v: fn saw %v, want each of %v once", tc.n, tc.limit, late, seen, want)
			}
			bound := int32(max(tc.limit, 1))
			if peak.Load() > bound {
				t.Errorf("n=%d limit=%d late=%v: %d calls at once, more than the limit", tc.n, tc.limit, late, peak.Load())
			}
			if tc.n >= 2*tc.limit && tc.limit > 1 && peak.Load() < 2 {
				t.Errorf("n=%d limit=%d late=%v: calls never overlapped (peak %d): the workers ran one at a time", tc.n, tc.limit, late, peak.Load())
			}
		}
	}
}
