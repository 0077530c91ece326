package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// MaxInputSize is the most kapply reads from one input — a file, stdin or
// a URL: 256 MiB. kubectl reads without a bound (-f /dev/zero fills the
// memory); manifests are kilobytes, and the API server refuses a request
// body over 3 MiB.
const MaxInputSize = 256 << 20

// ErrTooLarge reports an input over MaxInputSize.
var ErrTooLarge = fmt.Errorf("larger than %d MiB, the most kapply reads from one file, stdin or URL", MaxInputSize>>20)

// readInput reads in whole, once, within ctx: a path, stdin (files.Stdin,
// or the process's) or a URL (files.RequestTimeout bounds the whole read).
// Its errors are the builder's where it has some (a file that does not
// open or read, a URL that does not answer 200), and name the input.
func readInput(ctx context.Context, in input, files Files) ([]byte, error) {
	switch in.kind {
	case urlInput:
		return fetch(ctx, in.source, files.RequestTimeout)
	case stdinInput:
		stdin := files.Stdin
		if stdin == nil {
			stdin = os.Stdin
		}
		return inBackground(ctx, in.source, func() ([]byte, error) { return readAll(ctx, in.source, stdin) }, func() {})
	}
	return readFile(ctx, in.source)
}

// isRegularFile tells that in is a path to a regular file (a symbolic
// link followed).
func isRegularFile(in input) bool {
	if in.kind != fileInput {
		return false
	}
	info, err := os.Stat(in.source)
	return err == nil && info.Mode().IsRegular()
}

// readFile reads the file at path. Opening a FIFO blocks until a writer
// opens it, and a read of it until the writer writes: both run apart
// (inBackground); when ctx is done, closing the file wakes the read (os.Open
// puts a FIFO in the runtime's poller), and a file opened after that is
// closed at once.
func readFile(ctx context.Context, path string) ([]byte, error) {
	var opened atomic.Pointer[os.File]
	read := func() ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err // the builder's error: its FileVisitor opens the file
		}
		defer f.Close()
		opened.Store(f)
		return readAll(ctx, path, f)
	}
	return inBackground(ctx, path, read, func() {
		if f := opened.Load(); f != nil {
			f.Close() // a second Close is harmless
		}
	})
}

// inBackground runs read in a goroutine and waits for it, or for ctx.
// A read of a pipe or a terminal blocks until the writer writes, and Go
// cannot interrupt it: os.Stdin is a blocking descriptor, outside the
// runtime's poller, and closing it does not wake a read (the descriptor is
// closed when the read returns). So when ctx is done, interrupt wakes what
// can be woken, and the read is abandoned: it ends when its read returns
// (readAll stops at ctx) or with the process. The caller returns at once,
// and a second signal finds the process responsive.
func inBackground[T any](ctx context.Context, source string, read func() (T, error), interrupt func()) (T, error) {
	type result struct {
		data T
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := read()
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		interrupt()
		var none T
		return none, interrupted(ctx, source)
	}
}

// interrupted is the error of the input source, not read before ctx was
// done.
func interrupted(ctx context.Context, source string) error {
	return fmt.Errorf("error reading %s: %w", source, context.Cause(ctx))
}

// readAll reads r, the input source, to its end: at most MaxInputSize
// bytes (ErrTooLarge past them, before any read for a regular file that
// large), and no further once ctx is done. A regular file is read into a
// buffer of its size, as os.ReadFile does: one read, and one to see the
// end. Anything else is read into chunks of growing size (up to
// maxChunk), joined at the end: an endless input holds the limit at its
// peak, not the limit and the half of it a doubling buffer holds while it
// is copied. A read that fails is reported as the builder's decoder
// reports it.
func readAll(ctx context.Context, source string, r io.Reader) ([]byte, error) {
	tooLarge := fmt.Errorf("error reading %s: %w", source, ErrTooLarge)
	size := int64(0)
	if f, ok := r.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
	}
	if size > MaxInputSize {
		return nil, tooLarge
	}
	var full [][]byte
	chunk := make([]byte, 0, size+512)
	total := 0
	for {
		if ctx.Err() != nil {
			return nil, interrupted(ctx, source)
		}
		if len(chunk) == cap(chunk) {
			full = append(full, chunk)
			chunk = make([]byte, 0, min(2*cap(chunk), maxChunk))
		}
		n, err := r.Read(chunk[len(chunk):cap(chunk)])
		chunk, total = chunk[:len(chunk)+n], total+n
		switch {
		case total > MaxInputSize:
			return nil, tooLarge
		case errors.Is(err, io.EOF) && full == nil:
			return chunk, nil
		case errors.Is(err, io.EOF):
			return slices.Concat(append(full, chunk)...), nil
		case err != nil:
			return nil, fmt.Errorf("error parsing %s: %v", source, err) // StreamVisitor's
		}
	}
}

// maxChunk is the size readAll's chunks grow to.
const maxChunk = 8 << 20

// urlAttempts and urlRetryDelay are the builder's (readHttpWithRetries).
const (
	urlAttempts   = 3
	urlRetryDelay = time.Second
)

// fetch reads the URL u as the builder's URLVisitor does — up to three GETs
// a second apart, again after a transport error or a 5xx answer, its
// errors in its words — within ctx and, when timeout is set, within
// timeout for the whole read (the builder's client has none: a URL that
// never answers hung the run). It is written here because the builder
// takes neither a context nor a client.
func fetch(ctx context.Context, u string, timeout time.Duration) ([]byte, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no complete answer within the request timeout (%s)", timeout))
		defer cancel()
	}
	var last error
	for attempt := range urlAttempts {
		if attempt > 0 {
			select {
			case <-time.After(urlRetryDelay):
			case <-ctx.Done():
			}
		}
		data, retry, err := get(ctx, u)
		if err == nil {
			return data, nil
		}
		last = err
		if !retry || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, interrupted(ctx, u)
	}
	return nil, last
}

// get is one GET of u: the body, or the error and whether the builder would
// try again.
func get(ctx context.Context, u string) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if name := req.URL.Redacted(); err != nil && !strings.Contains(err.Error(), name) {
		// A redirect's error names only where it went ("/loop"). The
		// client's errors hide a password: so does this one.
		return nil, true, fmt.Errorf("error reading %s: %w", name, err)
	}
	if err != nil {
		return nil, true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode >= 500 && resp.StatusCode < 600
		return nil, retry, fmt.Errorf("unable to read URL %q, server reported %s, status code=%d", u, resp.Status, resp.StatusCode)
	}
	if resp.ContentLength > MaxInputSize {
		return nil, false, fmt.Errorf("error reading %s: %w", u, ErrTooLarge)
	}
	data, err := readAll(ctx, u, resp.Body)
	return data, false, err
}
