package fleet

import (
	"reflect"
	"testing"
)

// TestSelectContextNamesWithSlashesAndBrackets: EKS and GKE name contexts
// with slashes ("arn:aws:eks:eu-west-1:1:cluster/prod-a"); path.Match's *
// stops at a slash, so 'arn:*' or '*prod*' skipped those clusters and a
// rollout shrank without a word when another context matched. And a name
// is itself: a context named "lab[1]" is picked by its name.
func TestSelectContextNamesWithSlashesAndBrackets(t *testing.T) {
	all := []Cluster{
		{Context: "arn:aws:eks:eu-west-1:1:cluster/prod-a"},
		{Context: "gke_proj_europe-west1_prod-b"},
		{Context: "lab[1]"},
		{Context: "prod-local"},
	}
	for _, tc := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"*prod*"}, []string{"arn:aws:eks:eu-west-1:1:cluster/prod-a", "gke_proj_europe-west1_prod-b", "prod-local"}},
		{[]string{"arn:*"}, []string{"arn:aws:eks:eu-west-1:1:cluster/prod-a"}},
		{[]string{"*/prod-?"}, []string{"arn:aws:eks:eu-west-1:1:cluster/prod-a"}},
		{[]string{"lab[1]"}, []string{"lab[1]"}},
	} {
		got, err := Select(all, tc.patterns)
		var names []string
		for _, c := range got {
			names = append(names, c.Context)
		}
		if err != nil || !reflect.DeepEqual(names, tc.want) {
			t.Errorf("Select(%q) = %v, %v; want %v", tc.patterns, names, err, tc.want)
		}
	}
}
