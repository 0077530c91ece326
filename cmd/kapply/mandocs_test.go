package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestManPages: `make docs` (kapply built with -tags gendocs) writes a
// man page per command with cobra/doc, the flags and their help in it.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("go", "run", "-tags", "gendocs", ".", dir)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run -tags gendocs: %v\n%s", err, out)
	}
	pages := map[string][]string{
		"kapply.1":                   {`.TH "KAPPLY" "1" "Jan 1970" "kapply"`, `\fB--kuberc\fP`, "kapply-apply(1)"},
		"kapply-apply.1":             {`\fB--applyset\fP`, `"kyaml"`},
		"kapply-export.1":            {`"kyaml"`},
		"kapply-last-applied-view.1": {`"kyaml"`},
		"kapply-completion-zsh.1":    {"zsh"},
	}
	for name, want := range pages {
		content, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(content), w) {
				t.Errorf("%s has no %q", name, w)
			}
		}
	}
}
