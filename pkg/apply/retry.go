package apply

import (
	"context"

	"github.com/kapply/kapply/pkg/cluster"
)

// DefaultRetryWindow is cluster.DefaultRetryWindow. The retry rule is
// pkg/cluster's; these names stay for the library's callers during the
// move (aliases, for the transition only).
const DefaultRetryWindow = cluster.DefaultRetryWindow

// DefaultBackoff is cluster.DefaultBackoff.
var DefaultBackoff = cluster.DefaultBackoff

// RetryError is cluster.RetryError.
type RetryError = cluster.RetryError

// retryTransient runs fn under the run's retry rule (cluster.Retries.Do).
func (r *runner) retryTransient(ctx context.Context, fn func() error) error {
	return r.retries.Do(ctx, fn)
}

// answerWasLost reports whether err answers a request whose earlier
// attempt may have been done (cluster.AnswerWasLost).
func answerWasLost(err error) bool { return cluster.AnswerWasLost(err) }
