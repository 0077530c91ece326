package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows "applying N/M" on one terminal line when a run takes more
// than a second; it prints nothing when stderr is not a terminal.
type progress struct {
	w       io.Writer
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
	fmt.Fprintf(p.w, "\r\033[Kapplying %d/%d", done, total)
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
