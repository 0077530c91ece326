package plan

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// changedStringDataTargets lists, for a Secret item, the data keys that
// changed since the plan where the plan writes the same key of
// stringData: the server folds stringData into data, so the write
// replaces data.KEY, and the plan read it (its Merged object keeps live's
// data as the plan saw it). Without this a writer's change to data.KEY
// would be overwritten by a plan approved before it.
func (it Item) changedStringDataTargets(live *unstructured.Unstructured) []fieldpath.Path {
	if !it.ID.isSecret() || it.Merged == nil {
		return nil
	}
	var out []fieldpath.Path
	for _, c := range it.Changes {
		if c.Reason == KeptUnmanaged || len(c.Path) != 2 || c.Path[0].Field != "stringData" || !c.Path[1].IsField() {
			continue
		}
		key := c.Path[1].Field
		data := fieldpath.Fields("data", key)
		planned, plannedErr := data.Lookup(it.Merged)
		now, nowErr := data.Lookup(live.Object)
		if !sameDataValue(it.DigestKey, key, planned, plannedErr, now, nowErr) {
			out = append(out, data)
		}
	}
	return out
}

// sameDataValue: both absent, or now is planned (a digest of it, in an
// encoded plan).
func sameDataValue(k lastapplied.DigestKey, key string, planned any, plannedErr error, now any, nowErr error) bool {
	plannedAbsent, nowAbsent := errors.Is(plannedErr, fieldpath.ErrFieldNotFound), errors.Is(nowErr, fieldpath.ErrFieldNotFound)
	switch {
	case plannedAbsent || nowAbsent:
		return plannedAbsent && nowAbsent
	case plannedErr != nil || nowErr != nil:
		return false
	case lastapplied.IsRedacted(planned):
		return lastapplied.MatchesRedacted(k, planned, "data", key, now)
	}
	return fieldpath.Equal(planned, now)
}
