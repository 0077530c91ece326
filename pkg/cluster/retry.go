package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultRetryWindow is how long kapply goes on retrying requests the API
// server answers with "try again" (see retryable), counted from the
// request's first attempt or from the first "try again" answer of the
// run's current outage, whichever came first. No attempt starts after the
// window; the last one still gets its answer, or gives up after
// --request-timeout. A shorter --request-timeout shortens the window to its
// own length.
const DefaultRetryWindow = 15 * time.Second

// DefaultBackoff spaces the attempts inside the retry window: 250 ms, then
// 1.7 times longer each time, at most 4 s apart, or later when the server
// asks for it with Retry-After. The window, not Steps, ends the retries.
var DefaultBackoff = wait.Backoff{Steps: math.MaxInt32, Duration: 250 * time.Millisecond, Factor: 1.7, Jitter: 0.1, Cap: 4 * time.Second}

// Retries is a run's one rule for answers that say "try again". Every
// request of the run goes through it, so one bound holds for all of them.
type Retries struct {
	backoff wait.Backoff
	window  time.Duration

	mu sync.Mutex
	// outageSince is the first "try again" answer since the server last
	// gave any other answer: the run's requests stop retrying once the
	// server has given nothing else for the whole window.
	outageSince time.Time
}

// NewRetries builds a run's retry rule from a backoff (zero:
// DefaultBackoff), a window (zero: DefaultRetryWindow) and the client's
// request timeout (--request-timeout; zero when unset).
func NewRetries(backoff wait.Backoff, window, requestTimeout time.Duration) *Retries {
	r := &Retries{backoff: backoff, window: window}
	if r.backoff.Steps == 0 {
		r.backoff = DefaultBackoff
	}
	if r.window <= 0 {
		r.window = DefaultRetryWindow
	}
	if requestTimeout > 0 && requestTimeout < r.window {
		r.window = requestTimeout
	}
	return r
}

// RetryError is a request kapply stopped retrying: the server answered
// "try again" until the retry window closed.
type RetryError struct {
	// Attempts is how many times the request was sent.
	Attempts int
	// Elapsed is the time from the first attempt to the last answer.
	Elapsed time.Duration
	// Window is the run's retry window.
	Window time.Duration
	// Err is the last answer.
	Err error
}

func (e *RetryError) Error() string {
	answer := ""
	var status apierrors.APIStatus
	if errors.As(e.Err, &status) {
		code := int(status.Status().Code)
		answer = fmt.Sprintf(", the last answered %d %s", code, http.StatusText(code))
	}
	if e.Attempts == 1 {
		return fmt.Sprintf("%v (not retried%s: the server has answered only \"try again\" for the whole retry window of %s)", e.Err, answer, e.Window)
	}
	return fmt.Sprintf("%v (gave up after %d attempts in %s%s; kapply retries for at most %s)",
		e.Err, e.Attempts, e.Elapsed.Round(100*time.Millisecond), answer, e.Window)
}

func (e *RetryError) Unwrap() error { return e.Err }

// Do runs fn, and again while it fails with an answer that says "try
// again" (see retryable) and the retry window is open. Sleeps end at once
// when ctx does (SIGINT). Every kapply write is safe to send twice: a
// patch or an apply patch gives the same object again, a create that was
// stored gets AlreadyExists and is merged, a delete gets NotFound.
func (p *Retries) Do(ctx context.Context, fn func() error) error {
	start := time.Now()
	backoff := p.backoff
	lost := false
	for attempt := 1; ; attempt++ {
		err := fn()
		if !retryable(ctx, err) {
			p.answered(err)
			if lost && err != nil {
				return &lostAnswerError{err}
			}
			return err
		}
		lost = lost || mayHaveBeenDone(err)
		from := p.failing(time.Now())
		if start.Before(from) {
			from = start
		}
		deadline := from.Add(p.window)
		delay, asked := backoff.Step(), suggestedDelay(err)
		left := time.Until(deadline)
		if left <= 0 || asked > left || attempt >= p.backoff.Steps {
			return &RetryError{Attempts: attempt, Elapsed: time.Since(start), Window: p.window, Err: err}
		}
		if sleep(ctx, min(max(delay, asked), left)) != nil {
			return fmt.Errorf("%w (stopped retrying: %w)", err, context.Cause(ctx))
		}
	}
}

// failing records a "try again" answer at now and returns when the
// current outage began.
func (p *Retries) failing(now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.outageSince.IsZero() {
		p.outageSince = now
	}
	return p.outageSince
}

// answered ends the outage: the server gave an answer other than "try
// again" (a cancelled request says nothing about the server).
func (p *Retries) answered(err error) {
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return
	}
	p.mu.Lock()
	p.outageSince = time.Time{}
	p.mu.Unlock()
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryable tells whether err is an answer that says "try again": the
// server was not reached (connection refused), refused the request for now
// (429, 503, a 500 that asks to retry later), timed out (504, or an attempt
// that ran past --request-timeout), or the connection broke (reset, EOF)
// before an answer came. The end of ctx is never retryable.
func retryable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch status.Status().Code {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusBadGateway:
			return true
		case http.StatusInternalServerError:
			_, later := apierrors.SuggestsClientDelay(err)
			return later
		}
		return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
	}
	// client-go wraps an answer cut short ("unexpected error when reading
	// response body ... unexpected EOF"), which IsProbableEOF, comparing
	// the error itself, does not see.
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		utilnet.IsTimeout(err) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded)
}

// mayHaveBeenDone tells a retryable failure after which the server may have
// done the request: the answer, not the request, was lost.
func mayHaveBeenDone(err error) bool {
	return !utilnet.IsConnectionRefused(err) && !apierrors.IsTooManyRequests(err) && !apierrors.IsServiceUnavailable(err)
}

// lostAnswerError is the answer to a request sent again after an earlier
// attempt's answer was lost: NotFound to a delete, AlreadyExists to a
// create may be the earlier attempt's doing.
type lostAnswerError struct{ err error }

func (e *lostAnswerError) Error() string {
	return e.err.Error() + " (after an earlier attempt whose answer was lost)"
}

func (e *lostAnswerError) Unwrap() error { return e.err }

// AnswerWasLost reports whether err answers a request whose earlier
// attempt may have been done.
func AnswerWasLost(err error) bool {
	var lost *lostAnswerError
	return errors.As(err, &lost)
}

// suggestedDelay is the server's Retry-After carried in a Status answer.
func suggestedDelay(err error) time.Duration {
	seconds, ok := apierrors.SuggestsClientDelay(err)
	if !ok {
		return 0
	}
	return time.Duration(seconds) * time.Second
}

// TakeRetryAfter wraps the run's transport. client-go retries an answer
// with a Retry-After header by itself, ten times, beyond any bound of
// kapply's. This takes the header off, so every retry is Retries.Do's,
// and puts its value in the answer's Status (details.retryAfterSeconds),
// where Do reads it — the API server's own answers carry it
// there already; a proxy's may not.
func TakeRetryAfter(next http.RoundTripper) http.RoundTripper {
	return retryAfterTaker{next: next}
}

type retryAfterTaker struct{ next http.RoundTripper }

// maxStatusBody bounds how much of an error answer is read to carry the
// delay.
const maxStatusBody = 64 << 10

func (t retryAfterTaker) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < http.StatusInternalServerError) {
		return resp, err
	}
	seconds, convErr := strconv.Atoi(resp.Header.Get("Retry-After"))
	if convErr != nil || seconds < 0 {
		return resp, nil
	}
	resp.Header.Del("Retry-After")
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody))
	if closeErr := resp.Body.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, fmt.Errorf("reading the answer %d to %s %s: %w", resp.StatusCode, req.Method, req.URL.Path, err)
	}
	data, err := json.Marshal(statusWithDelay(resp.StatusCode, req.Method, body, seconds))
	if err != nil {
		return nil, fmt.Errorf("encoding the answer %d to %s %s: %w", resp.StatusCode, req.Method, req.URL.Path, err)
	}
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Del("Content-Length")
	resp.ContentLength = int64(len(data))
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// statusWithDelay is the answer's Status with details.retryAfterSeconds set:
// the body itself when it is one, else the Status client-go would make of it.
func statusWithDelay(code int, method string, body []byte, seconds int) *metav1.Status {
	var status metav1.Status
	if json.Unmarshal(body, &status) != nil || status.Kind != "Status" {
		message := strings.TrimSpace(string(body[:min(len(body), 2048)]))
		status = apierrors.NewGenericServerResponse(code, method, schema.GroupResource{}, "", message, seconds, true).ErrStatus
		status.Kind, status.APIVersion = "Status", "v1"
	}
	if status.Details == nil {
		status.Details = &metav1.StatusDetails{}
	}
	if status.Details.RetryAfterSeconds == 0 {
		status.Details.RetryAfterSeconds = int32(seconds)
	}
	return &status
}
