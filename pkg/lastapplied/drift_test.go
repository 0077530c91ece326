package lastapplied_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/schema"
)

// Drift is ownership's, but what it reads is this package's record: the
// compact and redacted forms are tested here, where they are built.

// TestDriftReadsAnElidedRecord: digests match the live strings they stand
// for, as leaves and inside lists compared whole (no schema); a changed
// string is drift.
func TestDriftReadsAnElidedRecord(t *testing.T) {
	_, live := lastapplied.Applied(t, lastapplied.Gadget(nil))
	owners, err := ownership.Owners(live)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []*schema.Kind{lastapplied.GadgetKind(t), nil} {
		d, err := ownership.FindDrift(live, nil, kind, owners, nil, lastapplied.TestKey)
		if err != nil || len(d.Changed) != 0 {
			t.Errorf("schema %v: drift %v, err %v; want none", kind != nil, d, err)
		}
	}
	edited := live.DeepCopy()
	edited.Object["spec"].(map[string]any)["byName"].([]any)[0].(map[string]any)["config"].(map[string]any)["text"] = lastapplied.LongText + "!"
	d, err := ownership.FindDrift(edited, nil, lastapplied.GadgetKind(t), owners, nil, lastapplied.TestKey)
	if err != nil || len(d.Changed) != 1 || d.Changed[0].Path.String() != "spec.byName[name=a].config.text" {
		t.Errorf("drift %+v, err %v; want spec.byName[name=a].config.text", d, err)
	}
}

// TestDriftComparesRedactedDigests: status finds a changed value, in data
// and in stringData (folded into data by the server), by the digest of the
// live value under the record's salt; an unchanged Secret has no drift.
func TestDriftComparesRedactedDigests(t *testing.T) {
	withRecord, _, err := lastapplied.AttachKeyed(lastapplied.SecretFile())
	if err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "creds", "namespace": "ns", "annotations": map[string]any{lastapplied.Annotation: withRecord.GetAnnotations()[lastapplied.Annotation]}},
		"data":     map[string]any{"token": lastapplied.B64(lastapplied.TokenValue), "same": lastapplied.B64(lastapplied.PasswordValue), "password": lastapplied.B64(lastapplied.PasswordValue)}}}
	d, err := ownership.FindDrift(live, nil, nil, &ownership.Ownership{}, nil, lastapplied.TestKey)
	if err != nil || len(d.Changed) != 0 {
		t.Fatalf("as applied: drift %+v, err %v; want none", d, err)
	}
	data := live.Object["data"].(map[string]any)
	data["token"], data["password"] = lastapplied.B64("other-token"), lastapplied.B64("other-password")
	d, err = ownership.FindDrift(live, nil, nil, &ownership.Ownership{}, nil, lastapplied.TestKey)
	var paths []string
	for _, c := range d.Changed {
		paths = append(paths, c.Path.String())
	}
	if err != nil || strings.Join(paths, ",") != "data.token,stringData.password" {
		t.Errorf("changed values: drift at %v, err %v; want data.token and stringData.password", paths, err)
	}
}
