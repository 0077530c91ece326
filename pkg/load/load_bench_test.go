package load

import (
	"os"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// benchTree is the tree BenchmarkLoad reads: KAPPLY_BENCH_TREE, or the one
// `go run ./hack/bench -write-tree /tmp/lt -objects 10000 -generation 0`
// writes (40 MB, 10,000 files; writing it from here would cost more than
// the load measured).
func benchTree(b *testing.B) string {
	tree := os.Getenv("KAPPLY_BENCH_TREE")
	if tree == "" {
		tree = "/tmp/lt/tree"
	}
	if _, err := os.Stat(tree); err != nil {
		b.Skipf("no tree to load (%v): write one with go run ./hack/bench -write-tree /tmp/lt -objects 10000 -generation 0", err)
	}
	return tree
}

// BenchmarkLoad loads a tree as `kapply apply -f TREE -R` does, without a
// server (Local mode needs none). cpu-s/op is the CPU time of the process
// (every core, the collector included) per load.
func BenchmarkLoad(b *testing.B) {
	files := Files{Filenames: []string{benchTree(b)}, Recursive: true}
	getter := genericclioptions.NewConfigFlags(false)
	start := cpuTime(b)
	for b.Loop() {
		objects, errs := Load(getter, files, "")
		if len(errs) > 0 || len(objects) == 0 {
			b.Fatalf("%d objects, errors %v", len(objects), errs)
		}
	}
	b.ReportMetric((cpuTime(b)-start).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
