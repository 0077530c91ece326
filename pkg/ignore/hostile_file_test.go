package ignore

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestIgnoreFileDuplicateTopKeyRefused: a second rules: key replaced the
// first, and its rules were dropped without a word (not even "matched
// nothing"); the keys of one rule were checked already (yaml decodes them
// into a struct), the file's own were not.
func TestIgnoreFileDuplicateTopKeyRefused(t *testing.T) {
	head := "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\n"
	rules := "rules:\n- {kind: Secret, jsonPointers: [/data]}\n"
	for name, data := range map[string]string{
		"rules twice":      head + rules + "rules: []\n",
		"kind twice":       head + rules + "kind: IgnoreRules\n",
		"apiVersion twice": head + rules + "apiVersion: kapply.dev/v1alpha1\n",
	} {
		_, err := Parse("rules.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), "rules.yaml:5") || !strings.Contains(err.Error(), "line 1") && !strings.Contains(err.Error(), "line 2") && !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s: error %v, want one naming rules.yaml:5 (the second key) and the first's line", name, err)
		}
	}
}

// TestIgnoreFileReadIsBounded: --ignore-file /dev/zero grew the process
// past 22 GB before the kernel killed it (os.ReadFile reads a device to
// its end); a file past the bound is refused, naming it.
func TestIgnoreFileReadIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error %v, want /dev/zero refused as larger than the bound", err)
	}
	big := filepath.Join(t.TempDir(), "rules.yaml")
	body := "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n" + strings.Repeat("# padding\n", maxRulesFileSize/10+1)
	if err := os.WriteFile(big, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file past the bound: error %v, want it refused", err)
	}
	ok := filepath.Join(t.TempDir(), "ok.yaml")
	if err := os.WriteFile(ok, []byte("apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n- {kind: A, jsonPointers: [/a]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rules, err := ReadFile(ok); err != nil || len(rules) != 1 {
		t.Errorf("a small file: %d rules, error %v; want its rule", len(rules), err)
	}
}

// TestIgnoreJQPathsHeldOnlyOnce: a jq expression that yields the same or
// absent paths without end (repeat, recurse) was collected whole in
// [path(EXPR)] until its 5 s ran out: 400 MB for one Secret, times each
// side and each object diffed at once. The paths are now taken one by
// one, kept only when the object holds them and once each, so memory is
// bounded by the object.
func TestIgnoreJQPathsHeldOnlyOnce(t *testing.T) {
	r := &Rule{JQPathExpressions: []string{"limit(800000; repeat(.) | .kind)", "limit(3000; recurse(.zz))"}}
	if err := r.compile(); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"kind": "Secret", "data": map[string]any{"k": "v"}}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	paths, err := r.pathsInTimed(obj, nil)
	close(done)
	if err != nil {
		t.Logf("ran out of time (a slow machine): %v", err)
	}
	if err == nil && (len(paths) != 1 || paths[0].String() != "kind") {
		t.Errorf("paths %v, want kind once", paths)
	}
	if grew := int64(peak.Load()) - int64(before.HeapInuse); grew > 24<<20 {
		t.Errorf("the heap grew by %d MiB while the expressions ran, want it bounded by the object", grew>>20)
	}
}
