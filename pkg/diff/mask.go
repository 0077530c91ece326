package diff

import "reflect"

// Masks shown for Secret values, as kubectl diff shows them: the same mask
// on both sides when a value is unchanged, marked before and after when it
// changes.
const (
	maskSame   = "***"
	maskBefore = "*** (before)"
	maskAfter  = "*** (after)"
)

// secretFields hold the values of a Secret.
var secretFields = []string{"data", "stringData"}

func isSecret(obj map[string]any) bool {
	return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

// maskSecret returns live and after with every value of data and stringData
// replaced by a mask that only says whether it changed. The inputs are not
// modified.
func maskSecret(live, after map[string]any) (map[string]any, map[string]any) {
	live, after = copyNonNil(live), copyNonNil(after)
	for _, field := range secretFields {
		before, _ := live[field].(map[string]any)
		now, _ := after[field].(map[string]any)
		if before != nil {
			live[field] = maskValues(before, now, maskBefore)
		}
		if now != nil {
			after[field] = maskValues(now, before, maskAfter)
		}
	}
	return live, after
}

// maskValues masks the values of side; changed is the mask for a key whose
// value differs in other.
func maskValues(side, other map[string]any, changed string) map[string]any {
	out := make(map[string]any, len(side))
	for k, v := range side {
		out[k] = maskSame
		if o, ok := other[k]; ok && !reflect.DeepEqual(o, v) {
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
	case !reflect.DeepEqual(old, new):
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
