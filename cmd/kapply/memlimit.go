package main

import (
	"os"
	"runtime/debug"
)

// softMemoryLimit is the heap size from which the garbage collector works
// harder instead of letting the heap grow past what a run holds. A no-op
// apply of 10,000 objects holds about 190 MB; without the limit its heap
// grew to 370–440 MB resident, with it 314–324 MB for the same CPU. Runs
// far below it never notice it; a run holding more than it spends more
// time collecting (the runtime caps that at half the CPU), not more memory
// than it must.
const softMemoryLimit = 280 << 20

// gcPercent lets the heap grow to three times what a run holds before a
// collection (GOGC=200, Go's default is 100): a run allocates far more
// than it keeps (decoded LISTs, files parsed, records encoded), and below
// the soft limit half the collections are saved. 10,000-object no-op:
// 1.59–1.98 s and 2.0–2.4 CPU s at 100, 1.36–1.67 s and 1.8–2.1 CPU s at
// 200, peak RSS the same (the limit holds it).
const gcPercent = 200

// limitMemory sets the soft limit and the collector's pace, unless
// GOMEMLIMIT or GOGC sets them already.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
