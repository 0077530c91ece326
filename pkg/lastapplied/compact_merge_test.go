package lastapplied

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/schema"
)

// gadgetKind gives the compacted fields their list strategies, by the Widget
// CRD: spec.byName a list keyed by name, spec.tags a set, and an object of
// unknown fields (config) inside byName's elements.
func gadgetKind(t *testing.T) *schema.Kind {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(fixture.WidgetCRD(fixture.WidgetGroup)), &crd); err != nil {
		t.Fatal(err)
	}
	kind, err := schema.FromCRD(&crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	return kind
}

var (
	longValue = "value-" + strings.Repeat("v", 100)
	longText  = "text-" + strings.Repeat("t", 100)
	longExtra = "extra-" + strings.Repeat("e", 100)
	longTag   = "tag-" + strings.Repeat("g", 100)
)

// gadget is a file whose record must elide: its blob does not pack small.
func gadget(edit func(spec map[string]any)) *unstructured.Unstructured {
	spec := map[string]any{
		"blob": noise("blob", 300*1024),
		"byName": []any{
			map[string]any{"name": "a", "value": longValue, "config": map[string]any{"text": longText, "extra": longExtra}},
			map[string]any{"name": "b", "value": "short"},
		},
		"tags": []any{longTag, "short"},
	}
	if edit != nil {
		edit(spec)
	}
	return widget(spec)
}

// applied is what the server holds after applying file: the file with its
// record, and then fields of another writer.
func applied(t *testing.T, file *unstructured.Unstructured) (record map[string]any, live *unstructured.Unstructured) {
	t.Helper()
	live, compacted, err := attachKeyed(file)
	if err != nil || !compacted {
		t.Fatalf("compacted %v, err %v", compacted, err)
	}
	record, err = Read(live)
	if err != nil {
		t.Fatal(err)
	}
	elem := record["spec"].(map[string]any)["byName"].([]any)[0].(map[string]any)
	if elem["config"].(map[string]any)["text"] != digestOf(longText) {
		t.Fatalf("the record keeps %v, want the digest of the text", elem["config"])
	}
	return record, live
}

func withOtherWriter(live *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	spec := out.Object["spec"].(map[string]any)
	spec["other"] = "theirs"
	spec["tags"] = append(spec["tags"].([]any), "theirs")
	byName := spec["byName"].([]any)
	byName[0].(map[string]any)["config"].(map[string]any)["foreign"] = "theirs"
	spec["byName"] = append(byName, map[string]any{"name": "c", "value": "theirs"})
	return out
}

func plan(t *testing.T, last map[string]any, file, live *unstructured.Unstructured) *merge.Result {
	t.Helper()
	withRecord, _, err := attachKeyed(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := merge.ThreeWay(last, withRecord.Object, live.Object, gadgetKind(t))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompactRecordReappliesUnchanged: digests in last-applied where the
// file has the long strings make no change and delete nothing.
func TestCompactRecordReappliesUnchanged(t *testing.T) {
	last, live := applied(t, gadget(nil))
	if p := plan(t, last, gadget(nil), withOtherWriter(live)); !p.Empty() {
		t.Errorf("re-apply of the same file plans changes: %v", p.Changes)
	}
}

// TestCompactRecordDeletesWhatTheFileDrops: with an elided record, fields
// and elements the file drops are deleted, inside list elements too, edits
// land, and what another writer set is kept.
func TestCompactRecordDeletesWhatTheFileDrops(t *testing.T) {
	last, live := applied(t, gadget(nil))
	live = withOtherWriter(live)
	newBlob := noise("blob2", 300*1024)
	merged := plan(t, last, gadget(func(spec map[string]any) {
		spec["blob"] = newBlob
		spec["byName"] = []any{map[string]any{"name": "a", "value": longValue + "2", "config": map[string]any{"text": longText}}}
		spec["tags"] = []any{"short"}
	}), live).Merged
	spec := merged["spec"].(map[string]any)
	want := map[string]any{
		"blob":   newBlob,
		"other":  "theirs",
		"tags":   []any{"short", "theirs"},
		"byName": []any{map[string]any{"name": "a", "value": longValue + "2", "config": map[string]any{"text": longText, "foreign": "theirs"}}, map[string]any{"name": "c", "value": "theirs"}},
	}
	if !SameAsRecorded(spec, want) {
		t.Errorf("merged spec\n%v\nwant\n%v", spec, want)
	}
}

// TestCompactRecordDigestWhereTheFileHasASubtree: a long string the file
// turns into an object is replaced; nothing the other writer set beside it
// is lost.
func TestCompactRecordDigestWhereTheFileHasASubtree(t *testing.T) {
	last, live := applied(t, gadget(nil))
	live = withOtherWriter(live)
	merged := plan(t, last, gadget(func(spec map[string]any) {
		spec["byName"].([]any)[0].(map[string]any)["config"].(map[string]any)["text"] = map[string]any{"inner": longText}
	}), live).Merged
	config := merged["spec"].(map[string]any)["byName"].([]any)[0].(map[string]any)["config"]
	want := map[string]any{"text": map[string]any{"inner": longText}, "extra": longExtra, "foreign": "theirs"}
	if !SameAsRecorded(config, want) {
		t.Errorf("config %v, want %v", config, want)
	}
}
