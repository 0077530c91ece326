package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

const fixturePackage = module + "internal/fixture"

// leafPackage is the one package of the module fixtures may import: it
// imports none itself, so it makes no cycle either.
const leafPackage = module + "internal/modroot"

// TestFixtureIsForTestsOnly: internal/fixture (the Widget CRD, the way to
// the real-world corpus) is imported by _test.go files only, so none of it
// is built into kapply; and it imports no package of this module but
// leafPackage, which imports none, so the tests of any package can use it
// without an import cycle.
func TestFixtureIsForTestsOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			switch {
			case imp == fixturePackage:
				t.Errorf("%s imports %s outside its tests: fixtures are for tests only", fields[0], imp)
			case fields[0] == fixturePackage && strings.HasPrefix(imp, module) && imp != leafPackage:
				t.Errorf("%s imports %s: fixtures import no package of the module", fields[0], imp)
			case fields[0] == leafPackage && strings.HasPrefix(imp, module):
				t.Errorf("%s imports %s: fixtures import it, so it imports no package of the module", fields[0], imp)
			}
		}
	}
}
