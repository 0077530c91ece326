package plan

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// secretPatchItem patches stringData.password of a Secret whose live data
// holds "b2xk" (old).
func secretPatchItem() Item {
	live := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "prod", "uid": "u-1", "resourceVersion": "7"},
		"data":     map[string]any{"password": "b2xk"}}
	merged := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": live["metadata"],
		"data": map[string]any{"password": "b2xk"}, "stringData": map[string]any{"password": "new"}}
	return Item{Action: Update, ID: ID{Version: "v1", Kind: "Secret", Namespace: "prod", Name: "creds"}, UID: "u-1", ResourceVersion: "7",
		LastApplied: recordDigest(&unstructured.Unstructured{Object: live}, testKey), DigestKey: testKey, DigestKeyID: testKey.ID(),
		Patch: Patch{Type: StrategicPatch, Data: []byte(`{"stringData":{"password":"new"}}`)}, Merged: merged,
		Changes: []Change{{Path: fieldpath.Fields("stringData", "password"), New: "new", Reason: SetByFile}}}
}

// TestVerifySecretStringDataReadsData: writing stringData.KEY replaces
// data.KEY, so a change to data.KEY since the plan refuses the item, in a
// plan as made and after a round trip (values as digests); a change
// elsewhere does not.
func TestVerifySecretStringDataReadsData(t *testing.T) {
	decoded, err := decodeKeyed(bytes.NewReader(encode(t, &Plan{Cluster: Cluster{Server: "s"}, Items: []Item{secretPatchItem()}})))
	if err != nil {
		t.Fatal(err)
	}
	for name, it := range map[string]Item{"as made": secretPatchItem(), "decoded": decoded.Items[0]} {
		live := func(data map[string]any) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
				"metadata": map[string]any{"name": "creds", "namespace": "prod", "uid": "u-1", "resourceVersion": "8"}, "data": data}}
		}
		if _, err := it.Verify(live(map[string]any{"password": "b3RoZXI="})); err == nil || !strings.Contains(err.Error(), "changed since the plan: data.password") {
			t.Errorf("%s: data.password changed since: %v", name, err)
		}
		if rv, err := it.Verify(live(map[string]any{"password": "b2xk", "other": "eA=="})); err != nil || rv != "8" {
			t.Errorf("%s: another key changed: %q, %v", name, rv, err)
		}
	}
}

// TestWithSecretValuesOfAPatchFromStringData: a decoded patch item whose
// merged object keeps a digest of live's data (the file gives stringData)
// is restored from the file: only what the patch sends must be given.
func TestWithSecretValuesOfAPatchFromStringData(t *testing.T) {
	decoded, err := decodeKeyed(bytes.NewReader(encode(t, &Plan{Cluster: Cluster{Server: "s"}, Items: []Item{secretPatchItem()}})))
	if err != nil {
		t.Fatal(err)
	}
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "prod"}, "stringData": map[string]any{"password": "new"}}}
	it, err := decoded.Items[0].WithSecretValues(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(it.Patch.Data, []byte(`"password":"new"`)) {
		t.Errorf("patch not restored: %s", it.Patch.Data)
	}
}
