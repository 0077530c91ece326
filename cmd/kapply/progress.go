package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows "applying N/M" (or another label: "waiting: N/M ready,
// 12s") on one terminal line when a run takes more than a second; it
// prints nothing when stderr is not a terminal.
type progress struct {
	w io.Writer
	// label goes before the counts; "applying" when empty.
	label   string
	started time.Time
	mu      sync.Mutex
	last    time.Time
	shown   bool
}

// progressDelay is how long a run goes before its progress shows.
const progressDelay = time.Second

func newProgress(w io.Writer) *progress {
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{w: w, started: time.Now()}
}

// update is called after each object.
func (p *progress) update(done, total int) {
	if p.w == nil {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.started) < progressDelay || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	switch p.label {
	case "":
		fmt.Fprintf(p.w, "\r\033[Kapplying %d/%d", done, total)
	default:
		fmt.Fprintf(p.w, "\r\033[K%s %d/%d, %s", p.label, done, total, now.Sub(p.started).Round(time.Second))
	}
}

// clear clears the progress line, if shown, before another line is
// printed; the next update shows it again.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// finish clears the progress line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// tick updates the line every second from counts, so a wait in which
// nothing changes still shows the time passing; stop ends it.
func (p *progress) tick(counts func() (done, total int)) (stop func()) {
	if p.w == nil {
		return func() {}
	}
	ticker := time.NewTicker(time.Second)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-quit:
				return
			case <-ticker.C:
				p.update(counts())
			}
		}
	}()
	return func() {
		ticker.Stop()
		close(quit)
		<-finished
	}
}
