package cluster

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// SharedRateLimiter is the limiter client-go would give each client built
// from cfg, with its defaults for a zero QPS or burst (nil: none), so that
// every client of the run draws on one limit: each would otherwise get its
// own, and the run could send --qps requests a second per client.
func SharedRateLimiter(cfg *rest.Config) flowcontrol.RateLimiter {
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps <= 0 {
		return nil
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, burst)
}
