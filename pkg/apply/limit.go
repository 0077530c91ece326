package apply

import "sync"

// each sends the indexes in turn on a closed channel, for forEachLimit.
func each(indexes []int) <-chan int {
	out := make(chan int, len(indexes))
	for _, i := range indexes {
		out <- i
	}
	close(out)
	return out
}

// forEachLimit calls fn for every index, at most limit at a time.
func forEachLimit(indexes <-chan int, limit int, fn func(int)) {
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range indexes {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			fn(i)
		})
	}
	wg.Wait()
}
