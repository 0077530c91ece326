package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// cliPackages are the command-line and kustomize packages a library
// caller of pkg/ must not have to build: kustomize alone is 70-odd
// packages, and cobra and pflag are a CLI's.
var cliPackages = []string{"github.com/spf13/cobra", "github.com/spf13/pflag", "sigs.k8s.io/kustomize/"}

// TestLibraryTakesNoCLI: no package of pkg/ but pkg/load (which reads -k
// with kustomize, through cli-runtime's resource builder) and pkg/health
// (whose CEL environment, k8s.io/apiserver/pkg/cel/environment, reads
// feature gates through k8s.io/component-base, which builds in pflag and
// cobra; TestHealthStaysOutOfTheLibrary keeps it to cmd) builds in a
// cobra, pflag or kustomize package, directly or through any dependency —
// the import check of TestImportsPointDown sees direct imports only, and
// pkg/apply once pulled 76 of them in through pkg/load. pkg/apply takes
// plain objects, so neither does it build the resource builder.
func TestLibraryTakesNoCLI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "../../pkg/...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./pkg/...: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		// pkg/check builds them in for the same reason as pkg/health
		// (k8s.io/apiserver's admission packages read feature gates), and
		// is kept to cmd the same way.
		if pkg == "pkg/load" || strings.HasPrefix(pkg, "pkg/load/") || pkg == "pkg/health" || pkg == "pkg/check" {
			continue
		}
		checked++
		for _, dep := range fields[1:] {
			if isCLIPackage(dep) {
				t.Errorf("%s builds in %s (see `go list -deps ./%s`)", pkg, dep, pkg)
			}
			if pkg == "pkg/apply" && dep == "k8s.io/cli-runtime/pkg/resource" {
				t.Errorf("pkg/apply builds in %s, the resource builder: it takes plain objects, pkg/load reads files", dep)
			}
		}
	}
	if checked == 0 {
		t.Fatal("go list listed no package of pkg/")
	}
}

func isCLIPackage(path string) bool {
	for _, p := range cliPackages {
		if path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
