package apply

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/schema"
	"github.com/kapply/kapply/pkg/secretmask"
)

// ConflictError refuses an object under NoOverwrite (kubectl's
// --overwrite=false): its patch would change fields someone else changed
// since the last apply. It names the fields, never their values (a
// Secret's would leak).
type ConflictError struct {
	Fields []fieldpath.Path
}

func (e *ConflictError) Error() string {
	names := make([]string, len(e.Fields))
	for i, p := range e.Fields {
		names[i] = p.String()
	}
	return fmt.Sprintf("the patch conflicts with changes made from original to current: %s changed since the last apply; not overwritten (WriteOptions.NoOverwrite)",
		strings.Join(names, ", "))
}

// refuseConflicts is NoOverwrite's check of a plan of file (with its new
// record) against the changes made live since the last apply (last; nil
// without a record).
// k is the digest key of a Secret's namespace.
func refuseConflicts(kind *schema.Kind, last, file map[string]any, live *unstructured.Unstructured, plan *merge.Result, k lastapplied.DigestKey) error {
	// The record is the tool's own: it changes on every apply.
	current := withoutRecord(live).Object
	secret := secretmask.IsSecret(live.Object)
	if secret {
		current = withRecordedStringData(last, current)
		last = withStringDataAsData(last)
	}
	same := func(path fieldpath.Path, recorded, value any) bool {
		if lastapplied.SameAsRecorded(value, recorded) {
			return true
		}
		// A redacted Secret record holds a digest of each value.
		return secret && len(path) == 2 && slices.Contains(secretmask.Fields(), path[0].Field) &&
			lastapplied.MatchesRedacted(k, recorded, path[0].Field, path[1].Field, value)
	}
	if fields := plan.Conflicts(kind, last, file, current, same); len(fields) > 0 {
		return &ConflictError{Fields: fields}
	}
	return nil
}

// withRecordedStringData returns a Secret's live content with each
// stringData.KEY the record holds put back, read as LiveStringData reads
// it (data.KEY decoded). The server keeps no stringData: without this,
// every change of a stringData value would look like someone else's (the
// record has it, live has not). current is not modified.
func withRecordedStringData(last, current map[string]any) map[string]any {
	recorded, _ := last["stringData"].(map[string]any)
	if len(recorded) == 0 {
		return current
	}
	plain := make(map[string]any, len(recorded))
	for key := range recorded {
		if v, ok := lastapplied.LiveStringData(current, key); ok {
			plain[key] = v
		}
	}
	out := maps.Clone(current)
	out["stringData"] = plain
	return out
}

// withStringDataAsData returns a Secret's record with each stringData.KEY
// also standing for data.KEY: the server writes the stringData entry there,
// over a data entry of the same key. Without this, live data.KEY would look
// changed by someone else whenever the record has stringData.KEY (a key
// moved from stringData to data, or given in both). A plain value is
// encoded as the server encodes it; a redacted one is a digest of the
// value's bytes, which MatchesRedacted checks against data.KEY decoded.
// last is not modified.
func withStringDataAsData(last map[string]any) map[string]any {
	recorded, _ := last["stringData"].(map[string]any)
	if len(recorded) == 0 {
		return last
	}
	data, _ := last["data"].(map[string]any)
	data = maps.Clone(data)
	if data == nil {
		data = map[string]any{}
	}
	for key, v := range recorded {
		s, ok := v.(string)
		switch {
		case !ok:
			continue // not text: the server refuses it, nothing to stand for
		case lastapplied.IsRedacted(s):
			data[key] = s
		default:
			data[key] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out := maps.Clone(last)
	out["data"] = data
	return out
}
