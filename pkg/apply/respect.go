package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fileFromLive replaces o's object by what Options.FileFromLive makes of
// it against live, before the object is planned: apply --respect-ignore
// gives the file live's values where the ignore rules say so. The whole
// run, the record included, then sees the rewritten object, as Argo CD's
// RespectIgnoreDifferences applies the rewritten manifest. After a
// conflict it runs again on the object it rewrote, with the live object
// read again: the ignored fields then take the newer live values (a
// field live no longer has leaves the file). Nothing happens without the
// option, or when the object does not exist.
func (r *runner) fileFromLive(o *object, live *unstructured.Unstructured, exists bool) error {
	if r.opts.FileFromLive == nil || !exists {
		return nil
	}
	rewritten, err := r.opts.FileFromLive(o.Obj, live)
	if err != nil {
		return fmt.Errorf("applying ignore rules to %s: %w", o.Ref(), err)
	}
	o.Obj = rewritten
	return nil
}
