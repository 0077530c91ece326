package depcheck

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var forbidden = []string{"k8s.io/kubectl", "k8s.io/kubernetes"}

// kubercLoader is the one part of k8s.io/kubectl kapply builds, and only
// into its commands (cmd/): kubectl's loader of the preferences file
// (kuberc) and the file's schema, so that a kuberc holds in kapply exactly
// as in kubectl. No package under pkg/ or internal/ may build it.
var kubercLoader = []string{
	"k8s.io/kubectl/pkg/kuberc",
	"k8s.io/kubectl/pkg/config",
	"k8s.io/kubectl/pkg/config/scheme",
	"k8s.io/kubectl/pkg/config/v1alpha1",
	"k8s.io/kubectl/pkg/config/v1beta1",
}

// TestNoForbiddenPackages guards that no package of k8s.io/kubectl or
// k8s.io/kubernetes is built into kapply or its tests. It looks at the
// packages built (`go list -deps -test ./...`), not at the module graph
// (`go list -m all`): sigs.k8s.io/cli-utils, whose kstatus/status package
// pkg/apply uses, requires k8s.io/kubectl in its go.mod for packages of its
// own that kapply never imports. A module that is in the graph but of
// which nothing is compiled adds no code to the binary and no behaviour to
// kapply; what the guard is for is that kapply is not kubectl's apply with
// a new front, and that holds exactly when no such package is built.
func TestNoForbiddenPackages(t *testing.T) {
	checkForbidden(t, "../../...", kubercLoader)
	checkForbidden(t, "../../pkg/...", nil)
	checkForbidden(t, "../../internal/...", nil)
}

// checkForbidden fails t for each forbidden package, other than allowed,
// built into the packages of pattern or their tests.
func checkForbidden(t *testing.T, pattern string, allowed []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list -deps -test %s: %v", pattern, err)
	}
	for _, pkg := range strings.Split(string(out), "\n") {
		if slices.Contains(allowed, pkg) {
			continue
		}
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("package %s is built into %s (see `go mod why %s`)", pkg, pattern, pkg)
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
