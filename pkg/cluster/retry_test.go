package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestRetryableAnswers: the answers that say "try again" are retried, the
// others are not, and the end of the run's context never is.
func TestRetryableAnswers(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	withDelay := apierrors.NewInternalError(errors.New("etcd leader changed"))
	withDelay.ErrStatus.Details.RetryAfterSeconds = 1
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &url.Error{Op: "Get", URL: "https://x", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", &url.Error{Op: "Patch", URL: "https://x", Err: syscall.ECONNRESET}, true},
		{"EOF", &url.Error{Op: "Patch", URL: "https://x", Err: io.EOF}, true},
		{"answer cut short (client-go's wrapping)", fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", io.ErrUnexpectedEOF), true},
		{"broken pipe", &url.Error{Op: "Post", URL: "https://x", Err: syscall.EPIPE}, true},
		{"attempt past --request-timeout", &url.Error{Op: "Get", URL: "https://x", Err: context.DeadlineExceeded}, true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"503", apierrors.NewServiceUnavailable("restarting"), true},
		{"504", apierrors.NewTimeoutError("timed out", 0), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "patch", 1), true},
		{"502", apierrors.NewGenericServerResponse(http.StatusBadGateway, "GET", gr, "a", "", 0, true), true},
		{"500 asking to retry", withDelay, true},
		{"500", apierrors.NewInternalError(errors.New("boom")), false},
		{"404", apierrors.NewNotFound(gr, "a"), false},
		{"409", apierrors.NewConflict(gr, "a", errors.New("changed")), false},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a", nil), false},
		{"403", apierrors.NewForbidden(gr, "a", errors.New("no")), false},
		{"other", errors.New("no kind Widget"), false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		if got := retryable(context.Background(), c.err); got != c.want {
			t.Errorf("%s: retryable = %v, want %v", c.name, got, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if retryable(ctx, apierrors.NewTooManyRequests("slow down", 1)) {
		t.Errorf("retried after the run's context ended")
	}
}

// stormServer answers every request with code — with Retry-After: 1 when
// it is 429, as an overloaded API server (priority and fairness) does —
// and counts them.
func stormServer(t *testing.T, code int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		fmt.Fprint(w, http.StatusText(code))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func stormClient(t *testing.T, srv *httptest.Server) dynamic.ResourceInterface {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL}
	cfg.Wrap(TakeRetryAfter)
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
}

// TestRetryWindowEndsAStorm: a server that answers 429 with Retry-After: 1
// forever is asked once a second, as it says, and given up on when the
// window closes — client-go's own ten retries per request are taken away,
// so the window is the only bound. The error says why.
func TestRetryWindowEndsAStorm(t *testing.T) {
	srv, hits := stormServer(t, http.StatusTooManyRequests)
	client := stormClient(t, srv)
	p := NewRetries(wait.Backoff{}, 1500*time.Millisecond, 0)
	start := time.Now()
	err := p.Do(context.Background(), func() error {
		_, err := client.Get(context.Background(), "a", metav1.GetOptions{})
		return err
	})
	took := time.Since(start)
	var retryErr *RetryError
	if !errors.As(err, &retryErr) || !apierrors.IsTooManyRequests(err) {
		t.Fatalf("err = %v, want a RetryError over a 429", err)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("gave up after %s, window 1.5s", took)
	}
	// Attempts at 0 and 1 s; a Retry-After past the window ends it.
	if n := hits.Load(); n != 2 || retryErr.Attempts != 2 {
		t.Errorf("server asked %d times, %d attempts; want 2 (once a second)", n, retryErr.Attempts)
	}
	t.Logf("%v", err)
}

// TestRetryOutageIsTheRunsWindow: once the server has answered only "try
// again" for the whole window, the run's next request is tried once, not
// given a window of its own — a storm ends the run within one window.
func TestRetryOutageIsTheRunsWindow(t *testing.T) {
	srv, hits := stormServer(t, http.StatusServiceUnavailable)
	client := stormClient(t, srv)
	p := NewRetries(wait.Backoff{Steps: 100, Duration: 20 * time.Millisecond, Factor: 1.5}, 500*time.Millisecond, 0)
	get := func() error {
		_, err := client.Get(context.Background(), "a", metav1.GetOptions{})
		return err
	}
	if err := p.Do(context.Background(), get); err == nil {
		t.Fatal("no error from a storm")
	}
	time.Sleep(100 * time.Millisecond)
	before := hits.Load()
	start := time.Now()
	err := p.Do(context.Background(), get)
	var retryErr *RetryError
	if !errors.As(err, &retryErr) || retryErr.Attempts != 1 || hits.Load()-before != 1 || time.Since(start) > 200*time.Millisecond {
		t.Errorf("second request in the same outage: %v after %s; want one attempt", err, time.Since(start))
	}
	// Any other answer ends the outage: the next request has a window again.
	p.answered(nil)
	if err := p.Do(context.Background(), get); !errors.As(err, &retryErr) || retryErr.Attempts < 2 {
		t.Errorf("after the server answered: %v; want retries again", err)
	}
}

// TestRetrySleepEndsWithTheContext: SIGINT (the run's context ending)
// stops a retry while it sleeps, at once.
func TestRetrySleepEndsWithTheContext(t *testing.T) {
	p := NewRetries(wait.Backoff{Steps: 100, Duration: 10 * time.Second}, time.Minute, 0)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err := p.Do(ctx, func() error { return apierrors.NewServiceUnavailable("restarting") })
	if !errors.Is(err, context.Canceled) || !apierrors.IsServiceUnavailable(err) {
		t.Errorf("err = %v, want the last answer and the cancellation", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("returned %s after the start, the context ended after 200ms", took)
	}
}

// TestRetryWindowFollowsRequestTimeout: a shorter --request-timeout is the
// window; a longer one leaves the default.
func TestRetryWindowFollowsRequestTimeout(t *testing.T) {
	for _, c := range []struct {
		opt, timeout, want time.Duration
	}{
		{0, 0, DefaultRetryWindow},
		{0, 2 * time.Second, 2 * time.Second},
		{0, time.Minute, DefaultRetryWindow},
		{5 * time.Second, 0, 5 * time.Second},
		{5 * time.Second, time.Second, time.Second},
	} {
		if got := NewRetries(wait.Backoff{}, c.opt, c.timeout).window; got != c.want {
			t.Errorf("RetryWindow %s, --request-timeout %s: window %s, want %s", c.opt, c.timeout, got, c.want)
		}
	}
}

// TestRetryAfterLostAnswerIsMarked: an answer after an attempt whose answer
// was lost (a reset) is marked, so NotFound to a repeated delete can count
// as done; after a refused connection (nothing was sent) it is not.
func TestRetryAfterLostAnswerIsMarked(t *testing.T) {
	p := NewRetries(wait.Backoff{Steps: 5, Duration: time.Millisecond}, 0, 0)
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "a")
	for _, c := range []struct {
		first error
		want  bool
	}{
		{&url.Error{Op: "Delete", URL: "https://x", Err: syscall.ECONNRESET}, true},
		{&url.Error{Op: "Delete", URL: "https://x", Err: syscall.ECONNREFUSED}, false},
		{apierrors.NewTooManyRequests("slow down", 0), false},
	} {
		n := 0
		err := p.Do(context.Background(), func() error {
			if n++; n == 1 {
				return c.first
			}
			return notFound
		})
		if !apierrors.IsNotFound(err) || AnswerWasLost(err) != c.want {
			t.Errorf("after %v: %v, lost = %v, want %v", c.first, err, AnswerWasLost(err), c.want)
		}
	}
}
