package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
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

// cgroupMemoryFiles hold the memory limit of the process's cgroup (v2,
// then v1), where a container runtime sets it.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// limitMemory sets the soft limit and the collector's pace, unless
// GOMEMLIMIT or GOGC sets them already.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softLimit(cgroupMemory()))
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// softLimit is softMemoryLimit, or three quarters of a container's memory
// when that is less: in a pod of 256 MiB, the heap that GOGC=200 lets grow
// to three times what a run holds must still stop short of the OOM killer.
func softLimit(container int64) int64 {
	if container > 0 && container/4*3 < softMemoryLimit {
		return container / 4 * 3
	}
	return softMemoryLimit
}

// cgroupMemory is the memory limit of the process's cgroup in bytes, 0
// when there is none or it cannot be read.
func cgroupMemory() int64 {
	for _, path := range cgroupMemoryFiles {
		if data, err := os.ReadFile(path); err == nil {
			return parseMemoryLimit(string(data))
		}
	}
	return 0
}

// parseMemoryLimit reads a cgroup memory limit: "max" (v2) or a number of
// bytes, of which v1 writes a huge one for none.
func parseMemoryLimit(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= 1<<50 {
		return 0
	}
	return n
}
