package apply

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// reachServer asks the API server for its version, so that an unreachable
// server gives one clear error instead of one per object. A connection
// refused on this first contact fails at once, as kubectl does: nothing
// listens there (no kubeconfig, a wrong host or port), and waiting out the
// retry window would only delay the same answer. Any other "try again"
// answer (429, 503, a timeout) comes from a server that is there, and is
// retried within the window, as are refusals later in the run, from a
// server that was reached and then went away.
func (r *runner) reachServer(ctx context.Context) error {
	if r.discovery == nil {
		return nil
	}
	start := time.Now()
	first := true
	err := r.retryTransient(ctx, func() error {
		err := r.discovery.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
		if first && utilnet.IsConnectionRefused(err) {
			return &UnreachableError{Host: refusedHost(err, r.host), Err: err}
		}
		first = false
		return err
	})
	var unreachable *UnreachableError
	if err != nil && !errors.As(err, &unreachable) {
		return fmt.Errorf("reaching the API server at %s (retried for %s): %w; nothing was applied",
			r.host, time.Since(start).Round(100*time.Millisecond), err)
	}
	return err
}

// UnreachableError is a connection refused on the run's first request. It
// does not unwrap to the refusal, which the retries would take for a "try
// again".
type UnreachableError struct {
	// Host is the host and port that refused, as kubectl names it.
	Host string
	Err  error
}

// Error is kubectl's sentence for a refused connection.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", e.Host)
}

// refusedHost is the host:port of the refused request's URL, as kubectl's
// StandardErrorMessage takes it, or the configured host.
func refusedHost(err error, configured string) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		if u, parseErr := url.Parse(urlErr.URL); parseErr == nil && u.Host != "" {
			return u.Host
		}
	}
	return configured
}

// afterLoadErrors is the error of a run that could not reach the server:
// the files' errors first, which are the user's to fix whatever the
// server, then the server's.
func afterLoadErrors(loadErrs []error, err error) error {
	return errors.Join(append(slices.Clone(loadErrs), err)...)
}
