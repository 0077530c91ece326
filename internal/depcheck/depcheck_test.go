package depcheck

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

var forbidden = []string{"k8s.io/kubectl", "k8s.io/kubernetes"}

func TestNoForbiddenModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		module, _, _ := strings.Cut(line, " ")
		for _, f := range forbidden {
			if module == f {
				t.Errorf("%s is in the main module's dependency graph (via `go mod why -m %s`)", f, f)
			}
		}
	}
}

func TestNoReplaceDirectives(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct{ Replace []json.RawMessage }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("decoding go.mod: %v", err)
	}
	if len(mod.Replace) > 0 {
		t.Errorf("go.mod has %d replace directives; `go install github.com/kapply/kapply/cmd/kapply@latest` would fail", len(mod.Replace))
	}
}
