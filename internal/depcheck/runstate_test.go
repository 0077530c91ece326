package depcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runStateSmells are what a command must not do to run over several
// contexts (issue 34): carry run state in a context value, copy its cobra
// command per context, read its own flags back by name or choose exit
// rules by the command's name. A command gives pkg/fleet its options;
// the state a cluster's run needs is an argument (cmd/kapply's clusterRun).
var runStateSmells = map[string]*regexp.Regexp{
	"run state in a context value": regexp.MustCompile(`context\.WithValue\(|ctx\.Value\(`),
	"a copy of the cobra command":  regexp.MustCompile(`:= \*cmd\b`),
	"a flag read back by name":     regexp.MustCompile(`:= cmd\.Flags\(\)\.Lookup\("`),
	"exit rules by command name":   regexp.MustCompile(`cmd\.Name\(\) == "`),
}

// TestCommandsCarryNoRunState: no non-test file of cmd/kapply has one of
// runStateSmells.
func TestCommandsCarryNoRunState(t *testing.T) {
	files, err := filepath.Glob("../../cmd/kapply/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing cmd/kapply: %v (%d files)", err, len(files))
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for smell, re := range runStateSmells {
			if loc := re.FindIndex(src); loc != nil {
				line := 1 + strings.Count(string(src[:loc[0]]), "\n")
				t.Errorf("%s:%d: %s (%q)", filepath.Base(name), line, smell, src[loc[0]:loc[1]])
			}
		}
	}
}
