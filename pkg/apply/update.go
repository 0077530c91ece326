package apply

import (
	"errors"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
)

// staleFileError says why the server refused the patch of a file that sets
// metadata.resourceVersion.
func staleFileError(o *object, live *unstructured.Unstructured, err error) error {
	return fmt.Errorf("%w (the file sets metadata.resourceVersion %q; the object was at %q when read: remove the field, or write the file again from the live object)",
		err, o.Obj.GetResourceVersion(), live.GetResourceVersion())
}

// writeOutcome tells created, configured and unchanged apart after a write.
// A write can change nothing: a patch that re-sends what the server
// defaults or drops (minReadySeconds: 0, an empty map, a protocol the server
// fills into an atomic list, stringData already folded into data), or a
// server-side apply of what is live. The server then stores nothing and
// keeps the resourceVersion, so the object is unchanged — where kubectl says
// configured. When the resourceVersion did move, a controller may have
// written in between (a new CRD's status), so the returned object is
// compared with live, leaving out what no write of ours sets, by the
// engine's equality (the one the plan was made with); a dry run never
// moves the resourceVersion and is always compared.
func writeOutcome(live, written *unstructured.Unstructured, dryRun, withStatus bool) Outcome {
	switch {
	case live == nil:
		return Created
	case !dryRun && live.GetResourceVersion() == written.GetResourceVersion():
		return Unchanged
	case fieldpath.Equal(storedContent(live, withStatus), storedContent(written, withStatus)):
		return Unchanged
	}
	return Configured
}

// threeWay runs the engine on (last-applied, file with its new record, live).
func (r *runner) threeWay(o *object, live *unstructured.Unstructured) (*merge.Result, []string, error) {
	var warnings []string
	// The record is attached first: when live's is the same, it need not
	// be decoded (see lastapplied.Attached.LastApplied). The file with its
	// record is only read (the merge copies what it keeps): shared.
	attached, compactWarnings, attachErr := r.attachRecord(o, live, true)
	last, err := attached.LastApplied(live)
	switch {
	case errors.Is(err, lastapplied.ErrCompactCorrupt):
		warnings = append(warnings, fmt.Sprintf("%s: %v; treating it as absent, so no field is deleted on a guess", o.Ref(), err))
	case errors.Is(err, lastapplied.ErrMalformed):
		return nil, nil, malformedRecordError(o, err)
	case err != nil:
		return nil, nil, err
	case last == nil && lastapplied.HasRecord(live):
		warnings = append(warnings, fmt.Sprintf("%s has an empty or null %s annotation; it is patched and gets a record now, as kubectl does", o.Ref(), lastapplied.Annotation))
	case last == nil:
		warnings = append(warnings, fmt.Sprintf("%s has no %s annotation; it is patched and gets one now, as kubectl does", o.Ref(), lastapplied.Annotation))
	}
	if attachErr != nil {
		return nil, warnings, attachErr
	}
	file := attached.Obj
	warnings = append(warnings, compactWarnings...)
	lastapplied.DropStale(file, live)
	kind, err := r.schemas.Kind(o.Obj.GroupVersionKind())
	if err != nil {
		return nil, warnings, err
	}
	plan, err := merge.ThreeWay(last, file.Object, live.Object, kind)
	if err != nil {
		return nil, warnings, err
	}
	if r.opts.NoOverwrite {
		if err := refuseConflicts(kind, last, file.Object, live, plan, o.key); err != nil {
			return nil, warnings, err
		}
	}
	for _, w := range plan.Warnings {
		warnings = append(warnings, fmt.Sprintf("%s: %s", o.Ref(), w))
	}
	if w := shadowedCompactWarning(o, live, file.Object, kind, plan); w != "" {
		warnings = append(warnings, w)
	}
	return plan, warnings, nil
}

// storedContent is the object without what says when and by whom it was
// written (resourceVersion, managedFields) and, unless the file sets it,
// without status, which controllers write.
func storedContent(u *unstructured.Unstructured, withStatus bool) map[string]any {
	out := maps.Clone(u.Object)
	if !withStatus {
		delete(out, "status")
	}
	if metadata, ok := out["metadata"].(map[string]any); ok {
		metadata = maps.Clone(metadata)
		delete(metadata, "managedFields")
		delete(metadata, "resourceVersion")
		out["metadata"] = metadata
	}
	return out
}
