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

// writeConfigMaps writes n ConfigMaps of about 4 KB each to one file, their
// values of generation gen (every object of one generation differs from
// the last's), and returns the path.
func writeConfigMaps(t *testing.T, dir string, n, gen int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("configmaps-%d.yaml", gen))
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(file)
	value := strings.Repeat("0123456789abcdef", 250)
	for i := range n {
		if _, err := fmt.Fprintf(w, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  labels:\n    app: planmemory\ndata:\n  gen: \"%d\"\n  value: %s\n", i, gen, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// measuredKapply runs the kapply binary with args and returns its peak
// RSS and wall time; it fails the test if kapply fails.
func measuredKapply(t *testing.T, bin string, args ...string) (int64, time.Duration) {
	t.Helper()
	start := time.Now()
	run, err := peakrss.Command(context.Background(), bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	run.Cmd.Stderr = &stderr
	if err := run.Cmd.Run(); err != nil {
		t.Fatalf("kapply %s: %v\n%s", args[0], err, stderr.String())
	}
	took := time.Since(start)
	peak, err := run.Peak()
	if err != nil {
		t.Fatal(err)
	}
	return peak, took
}

// Peak RSS bounds of TestPlanAndApplyPlanMemoryBounded (5000 ConfigMaps
// of 4 KB, a 20 MB input, every one patched), the project's 400 MiB goal
// for any step. With the lean, streamed plan file (23 MB) and Execute
// reading by LIST: plan 309 MiB, apply --plan 262 MiB, plain apply 228
// MiB (2 cores, under a CI run's load); plan 210 MiB once it kept each
// item as the file holds it (PlanOptions.Saved). Before (a 125 MB file holding each
// item's merged object and every kept field, decoded whole; a GET per
// item, every live object held until all were checked): plan 606-680
// MiB, apply --plan 553-559 MiB, so either regression fails the test.
const (
	planMaxRSS      = 400 << 20
	applyPlanMaxRSS = 400 << 20
)

// TestPlanAndApplyPlanMemoryBounded: 5000 ConfigMaps are created, then
// changed in the files: `kapply plan -o` saves a plan of 5000 patches and
// `kapply apply --plan` checks (re-planning every item against the live
// object) and writes it. The peak resident memory of each command
// (peakrss, as TestMemoryBoundedOnA50MBInput measures it) stays under its
// bound; plain apply of the next generation is measured alongside, for
// the log.
func TestPlanAndApplyPlanMemoryBounded(t *testing.T) {
	requireCluster(t)
	if testing.Short() {
		t.Skip("plans and applies 5000 objects")
	}
	bin := kapplyBinary(t)
	f := newFaultRun(t)
	const n = 5000
	common := []string{"-n", f.ns, "--kubeconfig", cluster.Kubeconfig, "--cache-dir", f.cacheDir}
	kapply := func(args ...string) (int64, time.Duration) {
		return measuredKapply(t, bin, append(args, common...)...)
	}
	kapply("apply", "-f", writeConfigMaps(t, f.dir, n, 1), "-o", "name")

	files := writeConfigMaps(t, f.dir, n, 2)
	saved := filepath.Join(f.dir, "plan.json")
	planPeak, planTook := kapply("plan", "-f", files, "-o", saved)
	if st, err := os.Stat(saved); err == nil {
		t.Logf("plan file %d MiB", st.Size()>>20)
	}
	execPeak, execTook := kapply("apply", "--plan", saved, "-f", files, "-o", "name")
	applyPeak, applyTook := kapply("apply", "-f", writeConfigMaps(t, f.dir, n, 3), "-o", "name")
	t.Logf("%d ConfigMaps: plan %s %d MiB, apply --plan %s %d MiB; apply %s %d MiB", n,
		planTook.Round(time.Millisecond), planPeak>>20, execTook.Round(time.Millisecond), execPeak>>20,
		applyTook.Round(time.Millisecond), applyPeak>>20)
	if planPeak > planMaxRSS {
		t.Errorf("plan: peak RSS %d MiB, bound %d MiB", planPeak>>20, planMaxRSS>>20)
	}
	if execPeak > applyPlanMaxRSS {
		t.Errorf("apply --plan: peak RSS %d MiB, bound %d MiB", execPeak>>20, applyPlanMaxRSS>>20)
	}
}
