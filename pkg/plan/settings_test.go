package plan

import (
	"bytes"
	"testing"
)

// TestSettingsSurviveTheFile: a plan's settings (how its items are
// written) are in its file and come back as they were, so that executing
// a saved plan writes as the plan said; an apply item's subresource and
// record mode too.
func TestSettingsSurviveTheFile(t *testing.T) {
	p := samplePlan(t)
	p.Settings = Settings{FieldManager: "ci", ServerSide: true, ForceConflicts: true, FieldValidation: "Strict",
		Namespace: "shop", ApplySet: "web", PlainSecretRecord: true}
	for i := range p.Items {
		if p.Items[i].Action == Apply {
			p.Items[i].ShareRecord = true
			p.Items[i].Subresource = "status"
		}
	}
	got, err := Decode(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings != p.Settings {
		t.Errorf("settings %+v, want %+v", got.Settings, p.Settings)
	}
	for i, it := range got.Items {
		if it.ShareRecord != p.Items[i].ShareRecord || it.Subresource != p.Items[i].Subresource {
			t.Errorf("item %d: shareRecord %v subresource %q, want %v %q", i, it.ShareRecord, it.Subresource, p.Items[i].ShareRecord, p.Items[i].Subresource)
		}
	}
}
