package diff

import (
	"slices"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Masks shown for Secret values, as kubectl diff shows them: the same mask
// on both sides when a value is unchanged, marked before and after when it
// changes.
const (
	maskSame   = secretmask.Mask
	maskBefore = "*** (before)"
	maskAfter  = "*** (after)"
)

// maskSecret returns live and after with every value of data and stringData
// replaced by a mask that only says whether it changed. The inputs are not
// modified.
func maskSecret(live, after map[string]any) (map[string]any, map[string]any) {
	live, after = copyNonNil(live), copyNonNil(after)
	for _, field := range secretmask.Fields() {
		before, _ := live[field].(map[string]any)
		now, _ := after[field].(map[string]any)
		if before != nil {
			live[field] = maskValues(before, now, maskBefore)
		}
		if now != nil {
			after[field] = maskValues(now, before, maskAfter)
		}
	}
	maskRecords(live, after)
	return live, after
}

// maskRecords masks the last-applied annotations (shown with
// --show-managed): they hold a copy of the Secret, values included. live
// and after are copies of one level; their metadata is copied before it
// is changed.
func maskRecords(live, after map[string]any) {
	before, now := recordsOf(live), recordsOf(after)
	if len(before) > 0 {
		setAnnotations(live, maskValues(before, now, maskBefore))
	}
	if len(now) > 0 {
		setAnnotations(after, maskValues(now, before, maskAfter))
	}
}

// recordsOf returns obj's last-applied annotations; nil if it has none.
func recordsOf(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	var out map[string]any
	for _, key := range hiddenAnnotations {
		if v, ok := annotations[key]; ok {
			if out == nil {
				out = map[string]any{}
			}
			out[key] = v
		}
	}
	return out
}

// setAnnotations sets the given annotations of obj, over copies of its
// metadata and annotations.
func setAnnotations(obj map[string]any, set map[string]any) {
	meta := copyMap(obj["metadata"].(map[string]any))
	annotations := copyMap(meta["annotations"].(map[string]any))
	for k, v := range set {
		annotations[k] = v
	}
	meta["annotations"] = annotations
	obj["metadata"] = meta
}

// isRecordAnnotation reports the path of a last-applied annotation.
func isRecordAnnotation(p fieldpath.Path) bool {
	return len(p) == 3 && p[0].Field == "metadata" && p[1].Field == "annotations" && slices.Contains(hiddenAnnotations, p[2].Field)
}

// maskValues masks the values of side; changed is the mask for a key whose
// value differs in other.
func maskValues(side, other map[string]any, changed string) map[string]any {
	out := make(map[string]any, len(side))
	for k, v := range side {
		out[k] = maskSame
		if o, ok := other[k]; ok && !fieldpath.Equal(o, v) {
			out[k] = changed
		}
	}
	return out
}

// maskChange masks the two sides of one explained change.
func maskChange(old, new any) (string, string) {
	switch {
	case old == nil:
		return absent, maskSame
	case new == nil:
		return maskSame, absent
	case !fieldpath.Equal(old, new):
		return maskBefore, maskAfter
	}
	return maskSame, maskSame
}

func copyNonNil(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return copyMap(m)
}

// IsSecretValue reports whether a field of obj whose path starts with the
// field top holds a Secret value: obj is a v1 Secret and top is data or
// stringData. Commands other than diff (adopt, status) mask such fields with
// MaskChange, so that no command prints a Secret value.
func IsSecretValue(obj map[string]any, top string) bool {
	return secretmask.IsSecret(obj) && slices.Contains(secretmask.Fields(), top)
}

// MaskChange returns the masks shown for a Secret value that was old and is
// new (nil for a side that lacks it), as diff --explain shows them: "***"
// on both sides when unchanged, "*** (before)" and "*** (after)" when it
// changed, "(none)" for the missing side.
func MaskChange(old, new any) (string, string) {
	return maskChange(old, new)
}
