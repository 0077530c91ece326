package cluster

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestSharedRateLimiterHasClientGosDefaults: a zero QPS or burst takes
// client-go's default, as each client would (a burst of 0 refused every
// request); a negative QPS means no limit.
func TestSharedRateLimiterHasClientGosDefaults(t *testing.T) {
	for _, c := range []struct {
		qps       float32
		burst     int
		wantQPS   float32
		unlimited bool
	}{
		{qps: 500, burst: 1000, wantQPS: 500},
		{qps: 500, burst: 0, wantQPS: 500},
		{qps: 0, burst: 0, wantQPS: rest.DefaultQPS},
		{qps: -1, burst: 0, unlimited: true},
	} {
		limiter := SharedRateLimiter(&rest.Config{QPS: c.qps, Burst: c.burst})
		if c.unlimited {
			if limiter != nil {
				t.Errorf("QPS %v: a limiter, want none", c.qps)
			}
			continue
		}
		if limiter == nil || limiter.QPS() != c.wantQPS {
			t.Errorf("QPS %v burst %d: limiter %v, want QPS %v", c.qps, c.burst, limiter, c.wantQPS)
			continue
		}
		if !limiter.TryAccept() {
			t.Errorf("QPS %v burst %d: the first request is refused", c.qps, c.burst)
		}
	}
}
