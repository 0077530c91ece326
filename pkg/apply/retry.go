package apply

import (
	"context"

	"github.com/kapply/kapply/pkg/cluster"
)

// retryTransient runs fn under the run's retry rule (cluster.Retries.Do).
func (r *runner) retryTransient(ctx context.Context, fn func() error) error {
	return r.retries.Do(ctx, fn)
}

// answerWasLost reports whether err answers a request whose earlier
// attempt may have been done (cluster.AnswerWasLost).
func answerWasLost(err error) bool { return cluster.AnswerWasLost(err) }
