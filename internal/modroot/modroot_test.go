package modroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootFindsThisModule(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", root, err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(wd)); root != want {
		t.Errorf("Root() = %s, want %s (two up from internal/modroot)", root, want)
	}
}

func TestEnvOrBelow(t *testing.T) {
	t.Setenv("KAPPLY_MODROOT_TEST", "")
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	got, err := EnvOrBelow("KAPPLY_MODROOT_TEST", "bin", "x")
	if err != nil || got != filepath.Join(root, "bin", "x") {
		t.Errorf("unset: EnvOrBelow = %q, %v; want %q", got, err, filepath.Join(root, "bin", "x"))
	}
	t.Setenv("KAPPLY_MODROOT_TEST", "/elsewhere")
	if got, err := EnvOrBelow("KAPPLY_MODROOT_TEST", "bin"); err != nil || got != "/elsewhere" {
		t.Errorf("set: EnvOrBelow = %q, %v; want /elsewhere", got, err)
	}
}
