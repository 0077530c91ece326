package main

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
)

// holdBack is how long an object's line waits for a slower object before
// it in the input; then it is printed out of order.
const holdBack = 3 * time.Second

// lineStream prints each object's line (or error) as soon as the object is
// done: in input order while that holds no line back longer than holdBack,
// so a slow object (a CRD being established, a webhook) never hides what
// the others did. Its add is called concurrently.
type lineStream struct {
	printer *eventPrinter
	streams genericiooptions.IOStreams
	// before runs before each line, to clear the progress line.
	before func()
	// holdBack is the package's holdBack but in tests.
	holdBack time.Duration

	mu sync.Mutex
	// next is the first place in the input not yet printed.
	next    int
	waiting map[int]waitingEvent
	// printed counts, per printed place, the warnings printed with it.
	printed map[int]int
	stop    chan struct{}
	stopped sync.WaitGroup
}

type waitingEvent struct {
	ev    apply.Event
	since time.Time
}

// stream returns the stream of the printer's lines, or nil with -o yaml,
// json or kyaml, which print every object at the end as one list.
func (p *eventPrinter) stream(streams genericiooptions.IOStreams, before func()) *lineStream {
	if p.printsObjects() {
		return nil
	}
	return newLineStream(p, streams, before, holdBack)
}

func newLineStream(p *eventPrinter, streams genericiooptions.IOStreams, before func(), hold time.Duration) *lineStream {
	s := &lineStream{printer: p, streams: streams, before: before, holdBack: hold,
		waiting: map[int]waitingEvent{}, printed: map[int]int{}, stop: make(chan struct{})}
	s.stopped.Add(1)
	go s.releaseLate()
	return s
}

// add takes the event of the object at place i.
func (s *lineStream) add(i int, ev apply.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A line needs no object but to mask a failure's or a warning's Secret
	// values, and a line held back must not hold its objects too.
	s.waiting[i] = waitingEvent{ev: ev.Lean(), since: time.Now()}
	s.releaseInOrder()
}

// releaseInOrder prints the waiting lines that are next in the input.
func (s *lineStream) releaseInOrder() {
	for {
		if w, ok := s.waiting[s.next]; ok {
			s.emit(s.next, w.ev)
		} else if _, done := s.printed[s.next]; !done {
			return
		}
		s.next++
	}
}

// releaseLate prints, every quarter of holdBack, the lines that waited
// longer than holdBack, in input order.
func (s *lineStream) releaseLate() {
	defer s.stopped.Done()
	tick := time.NewTicker(s.holdBack / 4)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-tick.C:
			s.mu.Lock()
			for _, i := range s.waitingPlaces() {
				if now.Sub(s.waiting[i].since) >= s.holdBack {
					s.emit(i, s.waiting[i].ev)
				}
			}
			s.mu.Unlock()
		}
	}
}

func (s *lineStream) waitingPlaces() []int {
	places := make([]int, 0, len(s.waiting))
	for i := range s.waiting {
		places = append(places, i)
	}
	slices.Sort(places)
	return places
}

// emit prints one event and forgets it.
func (s *lineStream) emit(i int, ev apply.Event) {
	delete(s.waiting, i)
	if s.before != nil {
		s.before()
	}
	ev = eventsWithFlagNames([]apply.Event{ev})[0]
	s.printer.printEvent(s.streams, ev)
	s.printed[i] = len(ev.Warnings)
}

// close prints what still waits and returns, per printed place, how many of
// its warnings were printed. A nil stream printed nothing.
func (s *lineStream) close() map[int]int {
	if s == nil {
		return nil
	}
	close(s.stop)
	s.stopped.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range s.waitingPlaces() {
		s.emit(i, s.waiting[i].ev)
	}
	return s.printed
}

// lockedWriter serializes writes: klog (with -v) and kapply's lines write to
// stderr from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(b)
	if err != nil {
		return n, fmt.Errorf("writing: %w", err)
	}
	return n, nil
}
