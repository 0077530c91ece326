package ownership

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// TestDriftComparesLargeIntegersExactly: integers past 2^53 that float64
// would make equal are drift; the same integer decoded as another Go type
// is not.
func TestDriftComparesLargeIntegersExactly(t *testing.T) {
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Counter",
		"metadata": map[string]any{"name": "c"}, "spec": map[string]any{"limit": int64(1<<53 + 1), "small": int64(3)}}}
	withRecord, _, err := lastapplied.Attach(file)
	if err != nil {
		t.Fatal(err)
	}
	live := withRecord.DeepCopy()
	spec := live.Object["spec"].(map[string]any)
	spec["small"] = float64(3)
	d, err := FindDrift(live, nil, nil, &Ownership{}, nil, lastapplied.DigestKey{})
	if err != nil || len(d.Changed) != 0 {
		t.Fatalf("same values: drift %+v, err %v", d, err)
	}
	spec["limit"] = int64(1 << 53)
	d, err = FindDrift(live, nil, nil, &Ownership{}, nil, lastapplied.DigestKey{})
	if err != nil || len(d.Changed) != 1 || d.Changed[0].Path.String() != "spec.limit" {
		t.Errorf("limit 2^53+1 -> 2^53: drift %+v, err %v; want spec.limit", d, err)
	}
}
