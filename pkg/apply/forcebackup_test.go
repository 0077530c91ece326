package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/plan"
)

const liveSecretYAML = `
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  uid: 0d1e2f
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2024-01-02T03:04:05Z"
  labels: {tier: legacy}
  annotations: {note: kept}
  managedFields: [{manager: kubectl-client-side-apply, operation: Update}]
type: Opaque
data: {password: aHVudGVyMg==}
`

// TestSaveBackupWritesARestorableManifest: the saved copy of a Secret is
// readable by its owner only, named after the object, holds its keys without their values,
// labels and annotations and none of what a create refuses or ignores,
// and its path is told before anything else happens.
func TestSaveBackupWritesARestorableManifest(t *testing.T) {
	var live unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(liveSecretYAML), &live.Object); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var told string
	r := &runner{opts: settings{Options: Options{Force: &ForceOptions{BackupDir: dir, OnBackup: func(_ *unstructured.Unstructured, _ plan.Source, path string) { told = path }}}}}
	saved, err := r.saveBackup(&object{Obj: &live}, &live)
	if err != nil {
		t.Fatal(err)
	}
	if told != saved.path || filepath.Dir(saved.path) != dir || !strings.HasPrefix(filepath.Base(saved.path), "secret_shop_db-") {
		t.Errorf("saved to %s, told %q", saved.path, told)
	}
	info, err := os.Stat(saved.path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the saved copy has mode %v, want 0600", info.Mode().Perm())
	}
	content, err := os.ReadFile(saved.path)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
data:
  password: ""
kind: Secret
metadata:
  annotations:
    note: kept
  labels:
    tier: legacy
  name: db
  namespace: shop
type: Opaque
`
	if string(content) != want {
		t.Errorf("the saved copy:\n%s\nwant:\n%s", content, want)
	}
	if err := saved.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(saved.path); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
}

// TestBackupDirIsPrivateToTheUser: without ForceOptions.BackupDir, copies go
// to kapply/force-backups in the user's cache directory, created 0700.
func TestBackupDirIsPrivateToTheUser(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := (&runner{}).backupDir()
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "kapply", "force-backups") {
		t.Errorf("backup dir %s, want it under %s", dir, cache)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("backup dir has mode %v, want 0700", info.Mode().Perm())
	}
}
