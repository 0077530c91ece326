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

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
)

// backup is the file Force saves an object to before deleting it: if
// neither the file's object nor the original can be created afterwards (an
// interrupted run, a server that refuses both), the object lives on there.
// A Secret's backup holds its keys, not its values: the file outlives the
// run in the user's cache, where backups and other programs read it, so
// its values come back from the user's files (kapply apply -f) instead.
// Only its path is ever printed.
type backup struct {
	path string
	// keysOnly: a Secret's backup, which cannot create the original.
	keysOnly bool
}

// restoreHint says how the original comes back from the backup.
func (b backup) restoreHint() string {
	if b.keysOnly {
		return fmt.Sprintf("the original Secret's keys, not its values, are saved in %s: create it again from its files (kapply apply -f)", b.path)
	}
	return fmt.Sprintf("the original object is saved in %s (kubectl create -f %[1]s creates it again)", b.path)
}

// saveBackup writes live, as a manifest `kubectl create -f` takes, to a new
// file readable by its owner only, flushed to disk, and tells
// ForceOptions.OnBackup its path.
func (r *runner) saveBackup(o *object, live *unstructured.Unstructured) (backup, error) {
	saved := restorable(live)
	keysOnly := secretmask.IsSecret(saved.Object)
	if keysOnly {
		withoutValues(saved)
	}
	data, err := yaml.Marshal(saved.Object)
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
	file := backup{path: f.Name(), keysOnly: keysOnly}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return backup{}, errors.Join(fmt.Errorf("saving the object to %s before deleting it: %w", file.path, err), file.remove())
	}
	if r.opts.Force != nil && r.opts.Force.OnBackup != nil {
		r.opts.Force.OnBackup(o.Obj, o.Source, file.path)
	}
	return file, nil
}

// withoutValues empties each value of a Secret, keeping its keys, and
// drops its last-applied records, which hold the values when kubectl or
// --secret-record=plain wrote them.
func withoutValues(secret *unstructured.Unstructured) {
	for _, field := range secretmask.Fields() {
		values, _ := secret.Object[field].(map[string]any)
		for key := range values {
			values[key] = ""
		}
	}
	annotations := secret.GetAnnotations()
	delete(annotations, lastapplied.Annotation)
	delete(annotations, lastapplied.CompactAnnotation)
	secret.SetAnnotations(annotations)
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
