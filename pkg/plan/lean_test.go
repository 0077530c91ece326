package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// saved is p as a saved plan holds it (see onWire).
func saved(p *Plan) *Plan {
	out := *p
	out.Items = make([]Item, len(p.Items))
	for i, it := range p.Items {
		out.Items[i] = onWire(it)
	}
	return &out
}

// TestSavedPlanIsLean: a saved plan holds the changes that change, a
// merged object for a create alone (and a Secret, without what the server
// set), the labels of a patch, paths as text, one compact item a line,
// and the checksum last.
func TestSavedPlanIsLean(t *testing.T) {
	p := samplePlan(t)
	patch := &p.Items[0]
	patch.Merged["metadata"].(map[string]any)["labels"] = map[string]any{"app": "web"}
	patch.Merged["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "kubectl"}}
	if !slices.ContainsFunc(patch.Changes, func(c Change) bool { return c.Reason == KeptUnmanaged }) {
		t.Fatal("the sample's patch keeps no field: it tests nothing")
	}
	doc := encode(t, p)
	lines := strings.Split(strings.TrimSuffix(string(doc), "\n"), "\n")
	if len(lines) != len(p.Items)+2 || !strings.HasSuffix(lines[0], `"items":[`) || !strings.HasPrefix(lines[len(lines)-1], `],"checksum":"sha256:`) {
		t.Errorf("not a header line, an item a line and the checksum last:\n%s", doc)
	}
	for _, absent := range []string{"kept-unmanaged", "managedFields", "readyReplicas", "  ", `[{"field"`} {
		if strings.Contains(string(doc), absent) {
			t.Errorf("the saved plan holds %q:\n%s", absent, doc)
		}
	}
	for _, present := range []string{`"labels":{"app":"web"}`, `"path":"spec.ports[port=80,protocol=TCP].name"`, `"path":"spec.args[2]"`, `"merged":{"apiVersion":"v1","data":{"a":"1"}`} {
		if !strings.Contains(string(doc), present) {
			t.Errorf("the saved plan lacks %s:\n%s", present, doc)
		}
	}
	got, err := Decode(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	d := got.Items[0]
	if d.Merged != nil || d.Labels()["app"] != "web" || len(d.Changes) != 4 {
		t.Errorf("decoded patch item: merged %v, labels %v, %d changes", d.Merged, d.Labels(), len(d.Changes))
	}
	if got.Items[1].Merged == nil {
		t.Error("the create lost its object")
	}
}

// TestSavedSecretKeepsItsObject: a Secret's patch item keeps its merged
// object (its values' digests, which restoring and verifying read),
// without the server's metadata.
func TestSavedSecretKeepsItsObject(t *testing.T) {
	p, _ := secretPlan(t)
	for i := range p.Items {
		if p.Items[i].Merged != nil {
			p.Items[i].Merged["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "kubectl"}}
		}
	}
	got, err := Decode(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range got.Items {
		if p.Items[i].Merged == nil {
			continue
		}
		// A create's object is sent as it is: the file's, kept whole.
		md, _ := it.Merged["metadata"].(map[string]any)
		if it.Merged == nil || (md["managedFields"] != nil) != (it.Action == Create) || md["name"] == nil {
			t.Errorf("item %d (%s): merged %v", i+1, it.ID, it.Merged)
		}
	}
}

// TestChecksumSurvivesReformatting: the checksum covers the compact bytes
// of each member and item, whose keys kapply writes sorted; a reviewer's
// tool that reindents or sorts keys (jq ., jq -S, a decode into a map and
// back) leaves a plan that still reads, members in any order.
func TestChecksumSurvivesReformatting(t *testing.T) {
	for name, doc := range map[string][]byte{"plan": encode(t, samplePlan(t)), "list": encodeSet(t, twoContexts(t))} {
		generic, ok := genericDocument(doc)
		if !ok {
			t.Fatal("not a document")
		}
		sorted, err := json.MarshalIndent(generic, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Index(sorted, []byte(`"checksum"`)) > bytes.Index(sorted, []byte(`"kind"`)) {
			t.Fatalf("%s: the keys are not sorted: the checksum comes after the kind", name)
		}
		if _, _, err := DecodeAny(bytes.NewReader(sorted)); err != nil {
			t.Errorf("%s, reindented with its keys sorted: %v", name, err)
		}
	}
}

// TestDecodeRefusesAPlainSecretValue: a Secret item whose value is not a
// digest (edited in, the checksum made again) is refused: Encode writes
// none, and could not encode the plan again (found by FuzzDecode).
func TestDecodeRefusesAPlainSecretValue(t *testing.T) {
	p, _ := secretPlan(t)
	doc := reencode(t, encode(t, p), func(d map[string]any) {
		item(d, 0)["patch"].(map[string]any)["data"].(map[string]any)["stringData"].(map[string]any)["word"] = "plain-text-1"
	})
	_, err := Decode(bytes.NewReader(doc))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "item 1 (Secret/creds -n prod): a Secret item holds a value that is not a digest") {
		t.Errorf("got %v", err)
	}
}
