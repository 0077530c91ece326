package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/schema"
)

// decodeYAML decodes one side of a scenario as the API machinery would
// (integers as int64); "" is an absent object.
func decodeYAML(t testing.TB, s string) map[string]any {
	t.Helper()
	if strings.TrimSpace(s) == "" {
		return nil
	}
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("converting YAML: %v", err)
	}
	return decodeJSON(t, j)
}

func decodeJSON(t testing.TB, j []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := k8sjson.Unmarshal(j, &m); err != nil {
		t.Fatalf("decoding JSON: %v", err)
	}
	return m
}

func encodeJSON(t testing.TB, v map[string]any) []byte {
	t.Helper()
	if v == nil {
		return nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding JSON: %v", err)
	}
	return j
}

// oracleMerged is what kubectl apply produces: the server applying
// kubectl's three-way patch to live.
func oracleMerged(l, f, c map[string]any, meta strategicpatch.LookupPatchMeta) (map[string]any, error) {
	lj, fj, cj, err := encodeAll(l, f, c)
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(lj, fj, cj, meta, true)
	if err != nil {
		return nil, fmt.Errorf("creating kubectl's patch: %w", err)
	}
	return applySMP(cj, patch, meta)
}

func applySMP(live, patch []byte, meta strategicpatch.LookupPatchMeta) (map[string]any, error) {
	if live == nil {
		live = []byte("{}")
	}
	out, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta(live, patch, meta)
	if err != nil {
		return nil, fmt.Errorf("applying patch %s: %w", patch, err)
	}
	m := map[string]any{}
	if err := k8sjson.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("decoding patched object: %w", err)
	}
	return m, nil
}

func encodeAll(ms ...map[string]any) ([]byte, []byte, []byte, error) {
	out := make([][]byte, 3)
	for i, m := range ms {
		if m == nil {
			continue
		}
		j, err := json.Marshal(m)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("encoding: %w", err)
		}
		out[i] = j
	}
	return out[0], out[1], out[2], nil
}

// roundTrip gives both sides of a comparison the same number types.
func roundTrip(v map[string]any) (map[string]any, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, k8sjson.Unmarshal(j, &m)
}

// withoutArtifacts drops what kubectl's patch leaves in the object but the
// server discards when it decodes into Go structs, and the engine never
// produces:
//   - null map values (a field last-applied had, under a list element live
//     lacks);
//   - directive keys ($setElementOrder/x, $retainKeys), which the server's
//     patch code copies verbatim into a subtree live does not have yet;
//   - list elements holding `$patch: delete`, copied the same way into a
//     new element (an intended difference: the server would keep them as
//     elements holding only their key; see TestIntendedDeleteDirectiveLeak).
func withoutArtifacts(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil && !isDirective(k) {
				out[k] = withoutArtifacts(e)
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if _, directive := asMap(e)[directiveKey]; !directive {
				out = append(out, withoutArtifacts(e))
			}
		}
		return out
	}
	return v
}

func isDirective(k string) bool {
	return k == retainKeysKey || strings.HasPrefix(k, setOrderPrefix) || strings.HasPrefix(k, deleteFromPrefix)
}

// sameObject compares after a JSON round trip and returns a readable
// report of the first difference.
func sameObject(want, got map[string]any, lenient bool) (bool, string) {
	w, err1 := roundTrip(want)
	g, err2 := roundTrip(got)
	if err1 != nil || err2 != nil {
		return false, fmt.Sprintf("round trip: %v %v", err1, err2)
	}
	var wv, gv any = w, g
	if lenient {
		wv, gv = withoutArtifacts(w), withoutArtifacts(g)
	}
	// Equal canonical JSON (sorted keys) is the fast path; YAML only to
	// compare otherwise and to report.
	wj, err1 := json.Marshal(wv)
	gj, err2 := json.Marshal(gv)
	if err1 == nil && err2 == nil && bytes.Equal(wj, gj) {
		return true, ""
	}
	wy, err1 := yaml.Marshal(wv)
	gy, err2 := yaml.Marshal(gv)
	if err1 != nil || err2 != nil {
		return false, fmt.Sprintf("encoding YAML: %v %v", err1, err2)
	}
	if bytes.Equal(wy, gy) {
		return true, ""
	}
	return false, lineDiff(string(wy), string(gy))
}

// lineDiff prints both documents with the first differing line marked.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	first := 0
	for first < len(wl) && first < len(gl) && wl[first] == gl[first] {
		first++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d\n--- want\n", first+1)
	for i, l := range wl {
		fmt.Fprintf(&b, "%s %s\n", mark(i == first), l)
	}
	b.WriteString("+++ got\n")
	for i, l := range gl {
		fmt.Fprintf(&b, "%s %s\n", mark(i == first), l)
	}
	return b.String()
}

func mark(here bool) string {
	if here {
		return ">>"
	}
	return "  "
}

// checkAgainstOracle runs both differential checks: (a) kubectl's result
// equals our merged object; (b) our patch applied to live gives it too.
func checkAgainstOracle(t testing.TB, b *builtin, l, f, c map[string]any) *Result {
	t.Helper()
	return checkAgainstOracleOn(t, b, l, f, c)
}

// reporter is what the checks need from testing.TB, so generated triples
// can collect failures before printing the triple once.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// recorder collects failures.
type recorder struct {
	testing.TB
	failed bool
	log    string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.log += fmt.Sprintf(format, args...) + "\n"
}

func checkAgainstOracleOn(t reporter, b *builtin, l, f, c map[string]any) *Result {
	t.Helper()
	plan, _ := checkStrategic(t, b, l, f, c)
	return plan
}

// difference names an intended difference from kubectl that a triple ran
// into, each documented by a named test; "" is none.
type difference string

const (
	opaqueMapDifference  difference = "kubectl cannot patch into a map of objects or lists (TestIntendedOpaqueMapReplaced)"
	customListDifference difference = "custom-resource list merged where kubectl replaces it (TestCustomResourceMerge)"
)

// checkStrategic runs both checks for a kind patched with a strategic merge
// patch. Where kubectl fails because the Go types cannot describe a map of
// objects or lists, (a) compares with the lenient oracle instead.
func checkStrategic(t reporter, b *builtin, l, f, c map[string]any) (*Result, difference) {
	t.Helper()
	plan, err := ThreeWay(l, f, c, b.kind)
	if err != nil {
		t.Errorf("ThreeWay: %v", err)
		return nil, ""
	}
	var diff difference
	oracle, err := oracleMerged(l, f, c, b.meta)
	if err != nil && b.lenient != nil && isLookupFailure(err) && exercised(l, f, c, b.kind).has(opaqueMap) {
		diff = opaqueMapDifference
		oracle, err = oracleMerged(l, f, c, b.lenient)
	}
	if err != nil {
		t.Errorf("oracle: %v", err)
		return plan, diff
	}
	if ok, d := sameObject(oracle, plan.Merged, true); !ok {
		t.Errorf("(a) merged differs from kubectl's result (want = kubectl):\n%s", d)
	}
	checkOwnPatch(t, b, c, plan)
	return plan, diff
}

// isLookupFailure is apimachinery failing to find the Go field of a value
// it merges.
func isLookupFailure(err error) bool {
	return strings.Contains(err.Error(), "data type is not struct") || strings.Contains(err.Error(), "unable to find api field")
}

// checkOwnPatch is check (b) alone, for the intended differences.
func checkOwnPatch(t reporter, b *builtin, c map[string]any, plan *Result) {
	t.Helper()
	cj, err := json.Marshal(c)
	if err != nil {
		t.Errorf("encoding live: %v", err)
		return
	}
	if c == nil {
		cj = nil
	}
	applied, err := applySMP(cj, plan.Patch.Data, b.meta)
	if err != nil {
		t.Errorf("(b) applying our patch: %v", err)
		return
	}
	if ok, d := sameObject(plan.Merged, withoutGuard(applied, plan.Merged), false); !ok {
		t.Errorf("(b) our patch %s applied to live differs from our merged object (want = merged):\n%s", plan.Patch.Data, d)
	}
}

// withoutGuard drops from a patched object the resourceVersion that the
// patch's guard put back where the merged object has none (last-applied had
// one, the file dropped it): a precondition, not a change, since the server
// assigns a new resourceVersion on every write (see guardWithResourceVersion).
func withoutGuard(applied, merged map[string]any) map[string]any {
	if _, inMerged := asMap(merged["metadata"])["resourceVersion"]; inMerged {
		return applied
	}
	md, ok := applied["metadata"].(map[string]any)
	if !ok {
		return applied
	}
	out := make(map[string]any, len(applied))
	for k, v := range applied {
		out[k] = v
	}
	mdOut := make(map[string]any, len(md))
	for k, v := range md {
		if k != "resourceVersion" {
			mdOut[k] = v
		}
	}
	out["metadata"] = mdOut
	return out
}

// checkKind runs the differential checks of the kind's patch type.
func checkKind(t reporter, b *builtin, l, f, c map[string]any) (*Result, difference) {
	t.Helper()
	if b.meta == nil {
		return checkMergePatchKind(t, b, l, f, c)
	}
	return checkStrategic(t, b, l, f, c)
}

// checkMergePatchKind checks a kind without a Go type, which kubectl and
// kapply patch with a JSON merge patch: (b) our patch applied to live gives
// our merged object; (a) kubectl's result equals ours, unless file and live
// both hold a list that the schema merges by key or as a set, which kubectl
// replaces whole (an intended difference, see TestCustomResourceMerge).
func checkMergePatchKind(t reporter, b *builtin, l, f, c map[string]any) (*Result, difference) {
	t.Helper()
	plan, err := ThreeWay(l, f, c, b.kind)
	if err != nil {
		t.Errorf("ThreeWay: %v", err)
		return nil, ""
	}
	lj, fj, cj, err := encodeAll(l, f, c)
	if err != nil {
		t.Errorf("encoding: %v", err)
		return plan, ""
	}
	if cj == nil {
		cj = []byte("{}")
	}
	if applied, err := applyMergePatch(cj, plan.Patch.Data); err != nil {
		t.Errorf("(b) applying our merge patch: %v", err)
	} else if ok, d := sameObject(plan.Merged, withoutGuard(applied, plan.Merged), false); !ok {
		t.Errorf("(b) our merge patch %s applied to live differs from our merged object:\n%s", plan.Patch.Data, d)
	}
	if meetsGranularList(f, c, b.kind.Root) {
		return plan, customListDifference
	}
	kubectl, err := jsonmergepatch.CreateThreeWayJSONMergePatch(lj, fj, cj)
	if err != nil {
		t.Errorf("oracle: creating kubectl's merge patch: %v", err)
		return plan, ""
	}
	if oracle, err := applyMergePatch(cj, kubectl); err != nil {
		t.Errorf("oracle: %v", err)
	} else if ok, d := sameObject(oracle, plan.Merged, false); !ok {
		t.Errorf("(a) merged differs from kubectl's result (want = kubectl):\n%s", d)
	}
	return plan, ""
}

func applyMergePatch(live, patch []byte) (map[string]any, error) {
	out, err := jsonpatch.MergePatch(live, patch)
	if err != nil {
		return nil, fmt.Errorf("applying merge patch %s: %w", patch, err)
	}
	m := map[string]any{}
	if err := k8sjson.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("decoding patched object: %w", err)
	}
	return m, nil
}

// meetsGranularList reports whether file and live both hold, at one path,
// a list the schema merges by key or as a set.
func meetsGranularList(f, c any, n *schema.Node) bool {
	switch fv := f.(type) {
	case map[string]any:
		cm, ok := c.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range fv {
			if cv, inC := cm[k]; inC && meetsGranularList(v, cv, n.Field(k)) {
				return true
			}
		}
	case []any:
		_, isList := c.([]any)
		return isList && listKind(n) != schema.Atomic
	}
	return false
}
