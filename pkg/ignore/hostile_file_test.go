package ignore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
