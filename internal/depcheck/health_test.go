package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// celPackages are what pkg/health builds in and no other package of pkg/
// may: the health rules themselves, Kubernetes' CEL environment and
// cel-go, and k8s.io/component-base (feature gates, metrics, and through
// them pflag, cobra and prometheus).
// pkg/check (admission policies, k8s.io/apiserver's evaluator) is the
// other package that does, imported by cmd only as well.
var celPackages = []string{module + "pkg/health", module + "pkg/check", "k8s.io/apiserver/", "k8s.io/component-base/", "github.com/google/cel-go/"}

// TestHealthStaysOutOfTheLibrary: pkg/health is imported by cmd only. pkg/wait
// takes its Checker.Status as Options.Status, so neither pkg/wait nor
// pkg/apply, nor any other package of pkg/, builds in CEL or
// k8s.io/component-base (go list -deps, not only the direct imports).
func TestHealthStaysOutOfTheLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "../../pkg/...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./pkg/...: %v", err)
	}
	checked := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if pkg == "pkg/health" || pkg == "pkg/check" {
			continue
		}
		checked[pkg] = true
		for _, dep := range fields[1:] {
			for _, banned := range celPackages {
				if dep == strings.TrimSuffix(banned, "/") || strings.HasPrefix(dep, banned) {
					t.Errorf("%s builds in %s: only cmd may import pkg/health (see `go list -deps ./%s`)", pkg, dep, pkg)
				}
			}
		}
	}
	for _, must := range []string{"pkg/apply", "pkg/wait"} {
		if !checked[must] {
			t.Errorf("go list did not list %s", must)
		}
	}
}
