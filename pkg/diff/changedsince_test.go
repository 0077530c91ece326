package diff

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// TestChangedSince: each refused field is shown as the plan saw it (a
// change's Old, a value under a changed parent, a list replaced whole)
// against live now; a Secret's values are masked and the last-applied
// record is named, not shown.
func TestChangedSince(t *testing.T) {
	id := plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	it := plan.Item{ID: id,
		Changes: []plan.Change{
			{Path: fieldpath.Fields("data", "mode"), Old: "fast", New: "slow"},
			{Path: fieldpath.Fields("spec"), Old: map[string]any{"port": int64(80)}},
		},
		Replaced: []plan.Replaced{{Path: fieldpath.Fields("list"), Live: []any{"x"}}},
	}
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{"mode": "other"}, "spec": map[string]any{"port": int64(81)}, "list": []any{"y"}}
	fields := []fieldpath.Path{fieldpath.Fields("data", "mode"), fieldpath.Fields("spec", "port"), fieldpath.Fields("list"),
		fieldpath.Fields("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")}
	got, err := ChangedSince(it, fields, live)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- ConfigMap/a -n ns (when planned)\n", "+++ ConfigMap/a -n ns (now)\n",
		"-data.mode: fast\n", "+data.mode: other\n", "-spec.port: 80\n", "+spec.port: 81\n",
		" list:\n-  - x\n", "+  - \"y\"\n", ": (the record the plan read)\n", ": (another record)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}

	secret := plan.Item{ID: plan.ID{Version: "v1", Kind: "Secret", Namespace: "ns", Name: "s"},
		Changes: []plan.Change{{Path: fieldpath.Fields("data", "password"), Old: "c2VjcmV0"}}}
	liveSecret := map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"password": "b3RoZXI="}}
	got, err = ChangedSince(secret, []fieldpath.Path{fieldpath.Fields("data", "password")}, liveSecret)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "c2VjcmV0") || strings.Contains(got, "b3RoZXI=") || !strings.Contains(got, "***") {
		t.Errorf("a Secret's values are not masked:\n%s", got)
	}
}
