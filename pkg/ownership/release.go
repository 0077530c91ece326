package ownership

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// Release returns the patch that removes the fields from live's last-applied
// record, so the next apply leaves them to whoever writes them imperatively
// (kubectl scale, an autoscaler) instead of deleting them when the file no
// longer sets them. Every path must name something in the record; nothing
// else of the object changes, and the patch carries live's resourceVersion.
func Release(live *unstructured.Unstructured, paths []fieldpath.Path) ([]byte, error) {
	return lastapplied.EditRecord(live, func(record map[string]any) error {
		for _, p := range paths {
			if err := p.Remove(record); err != nil {
				return fmt.Errorf("releasing %s: %w (the last-applied record does not set it)", p, err)
			}
		}
		return nil
	})
}

// StillSet returns the paths the file still sets: the next apply would take
// them back from the imperative writer they were released to.
func StillSet(file *unstructured.Unstructured, paths []fieldpath.Path) []fieldpath.Path {
	var set []fieldpath.Path
	for _, p := range paths {
		if _, err := p.Lookup(file.Object); err == nil {
			set = append(set, p)
		}
	}
	return set
}
