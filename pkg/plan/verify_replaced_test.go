package plan

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// widgetLive is a custom resource whose keyed list spec.rules holds
// rules, at resourceVersion rv.
func widgetLive(t *testing.T, rv, rules string) *unstructured.Unstructured {
	return obj(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod","uid":"u-1","resourceVersion":"`+rv+`"},
		"spec":{"size":1,"rules":`+rules+`}}`)
}

// widgetItem is the merge patch item of the element a's backend a1 → a2:
// the patch sends spec.rules whole, the change names only the element.
func widgetItem(t *testing.T) Item {
	live := widgetLive(t, "1", `[{"name":"a","backend":"a1"}]`)
	a := fieldpath.Path{fieldpath.Field("spec"), fieldpath.Field("rules"), fieldpath.Key([]fieldpath.KeyValue{{Name: "name", Value: "a"}})}
	return Item{Action: Update, ID: IDOf(live), UID: "u-1", ResourceVersion: "1",
		Patch:    Patch{Type: MergePatch, Data: []byte(`{"metadata":{"resourceVersion":"1"},"spec":{"rules":[{"backend":"a2","name":"a"}]}}`)},
		Changes:  []Change{{Path: a.Child(fieldpath.Field("backend")), Old: "a1", New: "a2", Reason: SetByFile}},
		Replaced: []Replaced{{Path: fieldpath.Fields("spec", "rules"), Live: []any{map[string]any{"name": "a", "backend": "a1"}}}}}
}

// TestVerifyRefusesAnElementAddedToAListReplacedWhole: an element another
// writer added to a list the patch replaces whole is named by the list's
// path (no change names it); a move elsewhere is written past; the check
// survives the document.
func TestVerifyRefusesAnElementAddedToAListReplacedWhole(t *testing.T) {
	p, err := Decode(bytes.NewReader(encode(t, &Plan{Cluster: Cluster{Server: "s"}, Items: []Item{widgetItem(t)}})))
	if err != nil {
		t.Fatal(err)
	}
	it := p.Items[0]
	if len(it.Replaced) != 1 || it.Replaced[0].Path.String() != "spec.rules" {
		t.Fatalf("replaced after a round trip: %+v", it.Replaced)
	}
	if rv, err := it.Verify(widgetLive(t, "2", `[{"name":"a","backend":"a1"}]`)); err != nil || rv != "2" {
		t.Errorf("only the resourceVersion moved: %q %v", rv, err)
	}
	_, err = it.Verify(widgetLive(t, "2", `[{"name":"a","backend":"a1"},{"name":"ctrl"}]`))
	var changed *ChangedError
	if !errors.As(err, &changed) || len(changed.Fields) != 1 || changed.Fields[0].String() != "spec.rules" {
		t.Errorf("a controller added an element: %v, want a ChangedError naming spec.rules", err)
	}
	_, err = it.Verify(widgetLive(t, "2", `[{"name":"a","backend":"theirs"}]`))
	if !errors.As(err, &changed) || !strings.Contains(err.Error(), "spec.rules[name=a].backend") {
		t.Errorf("the planned element moved: %v", err)
	}
	unchanged := it
	unchanged.Action, unchanged.Patch = Unchanged, Patch{}
	if _, err := unchanged.Verify(widgetLive(t, "2", `[{"name":"a","backend":"a1"},{"name":"ctrl"}]`)); err != nil {
		t.Errorf("an item its ignore rules left unchanged writes nothing: %v", err)
	}
}

// TestFromMergeRecordsNoValueTwice: a list a change already names whole
// (no schema: atomic) is not recorded again.
func TestFromMergeRecordsNoValueTwice(t *testing.T) {
	if it := deploymentItem(t); len(it.Replaced) != 0 {
		t.Errorf("replaced %+v, but the containers' change holds the value", it.Replaced)
	}
}

// TestReplacedSecretValuesAreDigests: a Secret's data map a patch deletes
// whole is saved as digests and still verified key by key.
func TestReplacedSecretValuesAreDigests(t *testing.T) {
	live := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"prod","uid":"u-1","resourceVersion":"1"},
		"data":{"pw":"c2VjcmV0LXZhbHVlLVE5","other":"b3RoZXItWjc="}}`)
	it := Item{Action: Update, ID: IDOf(live), UID: "u-1", ResourceVersion: "1",
		Patch:    Patch{Type: StrategicPatch, Data: []byte(`{"data":null}`)},
		Replaced: []Replaced{{Path: fieldpath.Fields("data"), Live: live.Object["data"]}}}.KeyedBy(testKey, live)
	doc := encode(t, &Plan{Cluster: Cluster{Server: "s"}, Items: []Item{it}})
	for _, v := range []string{"c2VjcmV0LXZhbHVlLVE5", "secret-value-Q9", "b3RoZXItWjc="} {
		if bytes.Contains(doc, []byte(v)) {
			t.Fatalf("the plan holds a value %q:\n%s", v, doc)
		}
	}
	p, err := Decode(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	p.Items[0].DigestKey = testKey // as Execute gives it, read from the cluster
	moved := live.DeepCopy()
	moved.SetResourceVersion("2")
	if _, err := p.Items[0].Verify(moved); err != nil {
		t.Errorf("values as planned: %v", err)
	}
	moved.Object["data"].(map[string]any)["added"] = "eA=="
	if _, err := p.Items[0].Verify(moved); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "data") {
		t.Errorf("a key added: %v", err)
	}
}
