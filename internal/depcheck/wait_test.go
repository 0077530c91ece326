package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestWaitPullsInNoCLIPackages: pkg/wait is cli-utils' kstatus/status and
// client-go's watch tools only — not cli-utils' kstatus/watcher, whose
// cli-runtime brings kustomize, nor cobra or pflag (go list -deps, not only
// the direct imports).
func TestWaitPullsInNoCLIPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../pkg/wait").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"sigs.k8s.io/kustomize/", "github.com/spf13/cobra", "github.com/spf13/pflag", "k8s.io/cli-runtime/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("pkg/wait depends on %s", dep)
			}
		}
	}
}
