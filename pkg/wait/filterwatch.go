package wait

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// filteredWatch is apimachinery's watch.Filter that ends when stopped.
// watch.Filter's goroutine blocks sending an event nobody reads once the
// informer stops reading (a wait that ended by its timeout or its
// context): Stop stops only the upstream watch, so the goroutine, and
// the event it holds, lived as long as the process — one more per such
// wait of a long-lived Applier.
type filteredWatch struct {
	incoming watch.Interface
	result   chan watch.Event
	keep     func(watch.Event) bool
	stop     chan struct{}
	once     sync.Once
}

func newFilteredWatch(incoming watch.Interface, keep func(watch.Event) bool) watch.Interface {
	fw := &filteredWatch{incoming: incoming, result: make(chan watch.Event), keep: keep, stop: make(chan struct{})}
	go fw.loop()
	return fw
}

func (fw *filteredWatch) ResultChan() <-chan watch.Event { return fw.result }

func (fw *filteredWatch) Stop() {
	fw.once.Do(func() {
		close(fw.stop)
		fw.incoming.Stop()
	})
}

func (fw *filteredWatch) loop() {
	defer close(fw.result)
	for ev := range fw.incoming.ResultChan() {
		if !fw.keep(ev) {
			continue
		}
		select {
		case fw.result <- ev:
		case <-fw.stop:
			return
		}
	}
}
