package apply

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// DefaultBackoff spaces the attempts at a request the API server did not
// take (down, restarting, overloaded): about 15 s in all before giving up,
// long enough for an API server to restart.
var DefaultBackoff = wait.Backoff{Steps: 9, Duration: 250 * time.Millisecond, Factor: 1.7, Jitter: 0.1, Cap: 8 * time.Second}

// retryTransient runs fn again, with the run's backoff, while it fails in a
// way that says the server never acted on the request: the connection was
// refused, or the server answered 429 or 503. Anything else, and the
// context's end, stop it at once.
func (r *runner) retryTransient(ctx context.Context, fn func() error) error {
	return retry.OnError(r.opts.Backoff, func(err error) bool {
		return ctx.Err() == nil && notTaken(err)
	}, fn)
}

func notTaken(err error) bool {
	return utilnet.IsConnectionRefused(err) ||
		apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err)
}
