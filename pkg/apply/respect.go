package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fileFromLive replaces o's object by what Options.FileFromLive makes of
// it against live, before the object is planned: apply --respect-ignore
// gives the file live's values where the ignore rules say so. The whole
// run, the record included, then sees the rewritten object, as Argo CD's
// RespectIgnoreDifferences applies the rewritten manifest.
func (r *runner) fileFromLive(o *object, live *unstructured.Unstructured) error {
	rewritten, err := r.opts.FileFromLive(o.Obj, live)
	if err != nil {
		return fmt.Errorf("applying ignore rules to %s: %w", o.Ref(), err)
	}
	o.Obj = rewritten
	return nil
}
