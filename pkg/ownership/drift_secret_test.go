package ownership

import (
	"encoding/base64"
	"testing"

	"github.com/kapply/kapply/pkg/lastapplied"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDriftFoldsSecretStringData: the server stores a Secret's stringData
// under data, base64-encoded, over a data entry of the same key, and keeps
// no stringData. A Secret applied so is in step; a value changed since is
// drift under the record's own path.
func TestDriftFoldsSecretStringData(t *testing.T) {
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "creds"},
		"data":       map[string]any{"token": b64("t"), "password": b64("overridden")},
		"stringData": map[string]any{"password": "p"}}}
	key, err := lastapplied.NewDigestKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	withRecord, _, err := lastapplied.AttachWith(file, lastapplied.Recording{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "annotations": map[string]any{lastapplied.Annotation: withRecord.GetAnnotations()[lastapplied.Annotation]}},
		"data":     map[string]any{"token": b64("t"), "password": b64("p")}, "type": "Opaque"}}
	d, err := FindDrift(live, nil, nil, &Ownership{}, nil, key)
	if err != nil || len(d.Changed) != 0 {
		t.Fatalf("as the server stores it: drift %+v, err %v; want none", d, err)
	}
	live.Object["data"].(map[string]any)["password"] = b64("changed")
	d, err = FindDrift(live, nil, nil, &Ownership{}, nil, key)
	if err != nil || len(d.Changed) != 1 || d.Changed[0].Path.String() != "stringData.password" || d.Changed[0].Live != "changed" {
		t.Errorf("a changed value: drift %+v, err %v; want stringData.password", d, err)
	}
	delete(live.Object["data"].(map[string]any), "password")
	d, err = FindDrift(live, nil, nil, &Ownership{}, nil, key)
	if err != nil || len(d.Changed) != 1 || !d.Changed[0].LiveMissing {
		t.Errorf("a removed value: drift %+v, err %v; want stringData.password removed", d, err)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
