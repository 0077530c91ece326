package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressNeverWhenPiped: a writer that is not a terminal gets nothing.
func TestProgressNeverWhenPiped(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out)
	p.started = time.Now().Add(-time.Hour)
	p.update(1, 2)
	p.finish()
	if out.Len() != 0 {
		t.Errorf("progress printed %q to a pipe", out.String())
	}
}

// TestProgressShowsAfterASecondAndClears: on a terminal, nothing in the
// first second, then one line rewritten in place, cleared at the end.
func TestProgressShowsAfterASecondAndClears(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, started: time.Now()}
	p.update(1, 10)
	if out.Len() != 0 {
		t.Fatalf("progress shown before a second: %q", out.String())
	}
	p.started = time.Now().Add(-2 * time.Second)
	p.update(2, 10)
	p.update(3, 10) // within 100 ms of the last: skipped
	p.finish()
	want := "\r\x1b[Kapplying 2/10\r\x1b[K"
	if got := out.String(); got != want || strings.Contains(got, "3/10") {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
}

// TestWaitProgressShowsReadyCountAndTime: --wait's line counts the objects
// that are final and the time spent, ticking while nothing changes.
func TestWaitProgressShowsReadyCountAndTime(t *testing.T) {
	var out syncBuffer
	p := &progress{w: &out, started: time.Now().Add(-3 * time.Second), label: "waiting for readiness:"}
	stop := p.tick(func() (int, int) { return 1, 4 })
	time.Sleep(1200 * time.Millisecond)
	stop()
	p.finish()
	if got := out.String(); !strings.Contains(got, "\r\x1b[Kwaiting for readiness: 1/4, 4s") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress %q", got)
	}
}
