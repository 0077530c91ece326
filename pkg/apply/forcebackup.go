package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// backup is the file Force saves an object to before deleting it: if
// neither the file's object nor the original can be created afterwards (an
// interrupted run, a server that refuses both), the object lives on there.
// It holds the object's values, a Secret's data among them, so only its
// path is ever printed.
type backup struct{ path string }

// saveBackup writes live, as a manifest `kubectl create -f` takes, to a new
// file readable by its owner only, flushed to disk, and tells
// ForceOptions.OnBackup its path.
func (r *runner) saveBackup(o *object, live *unstructured.Unstructured) (backup, error) {
	data, err := yaml.Marshal(restorable(live).Object)
	if err != nil {
		return backup{}, fmt.Errorf("encoding the object to save it before deleting it: %w", err)
	}
	dir, err := r.backupDir()
	if err != nil {
		return backup{}, err
	}
	// CreateTemp opens the file with mode 0600 and a name no other run takes.
	f, err := os.CreateTemp(dir, backupPattern(live))
	if err != nil {
		return backup{}, fmt.Errorf("saving the object before deleting it: %w", err)
	}
	saved := backup{path: f.Name()}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return backup{}, errors.Join(fmt.Errorf("saving the object to %s before deleting it: %w", saved.path, err), saved.remove())
	}
	if r.opts.Force != nil && r.opts.Force.OnBackup != nil {
		r.opts.Force.OnBackup(o.Obj, o.Source, saved.path)
	}
	return saved, nil
}

// remove deletes the file once the object exists again.
func (b backup) remove() error {
	if err := os.Remove(b.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the saved copy of the object: %w", err)
	}
	return nil
}

// backupDir is ForceOptions.BackupDir, or kapply/force-backups in the
// user's cache directory (private to the user, unlike a shared /tmp, where
// the file names would show which objects were replaced), or os.TempDir()
// when there is no such directory.
func (r *runner) backupDir() (string, error) {
	if f := r.opts.Force; f != nil && f.BackupDir != "" {
		return f.BackupDir, nil
	}
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "kapply", "force-backups")
		if err := os.MkdirAll(dir, 0o700); err == nil {
			return dir, nil
		}
	}
	return os.TempDir(), nil
}

// backupPattern names the file after the object, kind.group_namespace_name,
// for os.CreateTemp to add a unique part to.
func backupPattern(live *unstructured.Unstructured) string {
	gk := live.GroupVersionKind().GroupKind()
	parts := []string{strings.ToLower(gk.String())}
	if ns := live.GetNamespace(); ns != "" {
		parts = append(parts, ns)
	}
	parts = append(parts, live.GetName())
	// Names never hold a path separator; a kind from a broken server might.
	prefix := strings.ReplaceAll(strings.Join(parts, "_"), string(filepath.Separator), "-")
	// A name may be 253 bytes and a namespace 63: cut the prefix so that
	// the file's name stays under the 255 bytes a file system allows, with
	// the random part (up to 10 digits) that keeps it unique.
	return prefix[:min(len(prefix), maxBackupPrefix)] + "-*.yaml"
}

const maxBackupPrefix = 200

// restorable is live without what the server assigns and refuses or
// ignores on a create (identity, version, timestamps, ownership records):
// spec, data, labels, annotations and status stay.
func restorable(live *unstructured.Unstructured) *unstructured.Unstructured {
	out := original(live)
	out.SetManagedFields(nil)
	out.SetCreationTimestamp(metav1.Time{})
	out.SetGeneration(0)
	out.SetSelfLink("")
	out.SetDeletionTimestamp(nil)
	out.SetDeletionGracePeriodSeconds(nil)
	return out
}
