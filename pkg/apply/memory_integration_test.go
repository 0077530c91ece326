package apply_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/peakrss"
)

// writeBigInput writes about size bytes of ConfigMaps, each with a 10 KB
// value, to one file, and returns the path and the number of objects.
func writeBigInput(t *testing.T, dir string, size int) (string, int) {
	t.Helper()
	path := filepath.Join(dir, "big.yaml")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(file)
	value := strings.Repeat("0123456789abcdef", 640)
	written, n := 0, 0
	for ; written < size; n++ {
		k, err := fmt.Fprintf(w, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-%d\ndata:\n  value: %s\n", n, value)
		if err != nil {
			t.Fatal(err)
		}
		written += k
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	return path, n
}

// maxRSS is the bound on kapply's peak resident memory for the 50 MB input:
// 8 times the input. Measured: about 220 MB for --dry-run=client (this
// test), about 380 MB for --dry-run=server, where every object also comes
// back from the server (docs/guarantees.md).
const maxRSS = 400 << 20

// TestMemoryBoundedOnA50MBInput: kapply applies 50 MB of ConfigMaps (5,082
// objects of 10 KB, one file) with --dry-run=client: every object is
// loaded, checked, read live (one LIST), planned and printed. Its peak
// resident memory (peakrss: the kernel's rusage of the command) stays
// under maxRSS.
func TestMemoryBoundedOnA50MBInput(t *testing.T) {
	requireCluster(t)
	bin := kapplyBinary(t)
	f := newFaultRun(t)
	path, n := writeBigInput(t, f.dir, 50<<20)
	start := time.Now()
	run, err := peakrss.Command(context.Background(), bin, "apply", "-f", path, "-n", f.ns, "--dry-run=client", "-o", "name",
		"--kubeconfig", cluster.Kubeconfig, "--cache-dir", f.cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.Cmd.Output()
	if err != nil {
		t.Fatalf("kapply: %v", err)
	}
	if lines := strings.Count(string(out), "\n"); lines != n {
		t.Errorf("%d lines for %d objects", lines, n)
	}
	peak, err := run.Peak()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d objects, 50 MB: peak RSS %d MB in %s", n, peak>>20, time.Since(start).Round(time.Millisecond))
	if peak > maxRSS {
		t.Errorf("peak RSS %d MB, bound %d MB", peak>>20, maxRSS>>20)
	}
}
