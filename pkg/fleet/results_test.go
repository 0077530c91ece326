package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// A PlanList missing a picked cluster's plan is refused naming it; the
// plans of clusters not picked are returned, to be said unapplied.
func TestPlansFor(t *testing.T) {
	set := &plan.Set{Plans: []plan.Entry{{Context: "a", Plan: &plan.Plan{}}, {Context: "b", Plan: &plan.Plan{}}}}
	left, err := PlansFor(set, []Cluster{{Context: "a"}})
	if err != nil || !reflect.DeepEqual(left, []string{"b"}) {
		t.Errorf("PlansFor(a) = %v, %v; want [b], nil", left, err)
	}
	_, err = PlansFor(set, []Cluster{{Context: "a"}, {Context: "c"}, {Context: "d"}})
	missing, ok := errors.AsType[*MissingPlansError](err)
	if !ok || !reflect.DeepEqual(missing.Contexts, []string{"c", "d"}) {
		t.Errorf("PlansFor(a, c, d) = %v; want the missing c and d", err)
	}
}

// A PlanList is made only of clusters that planned: a failed one, or
// one without a plan, is counted missing.
func TestPlanSetAndWorst(t *testing.T) {
	p := &plan.Plan{}
	results := []Result{
		{Cluster: Cluster{Context: "a"}, Outcome: Outcome{Plan: p}},
		{Cluster: Cluster{Context: "b"}, Outcome: Outcome{Plan: p, Code: 2, ClusterFailed: true}},
		{Cluster: Cluster{Context: "c"}, Outcome: Outcome{Code: 1}},
	}
	set, missing := PlanSet(results)
	if missing != 2 || len(set.Plans) != 1 || set.Plans[0].Context != "a" {
		t.Errorf("PlanSet = %+v, %d missing; want a alone, 2 missing", set.Plans, missing)
	}
	if code, failed := Worst(results); code != 2 || failed != 1 {
		t.Errorf("Worst = %d, %d failed; want 2, 1", code, failed)
	}
}

// Objects in step everywhere are left out; the others list the clusters
// of each state, the first cluster (by name) naming the object.
func TestAcross(t *testing.T) {
	inStep := apply.ObjectStatus{Object: "configmap/a", Source: "a.yaml", State: apply.StateApplied}
	missing := apply.ObjectStatus{Object: "configmap/b", Source: "a.yaml", State: apply.StateMissing}
	both := func(second apply.ObjectStatus) []apply.ObjectStatus { return []apply.ObjectStatus{inStep, second} }
	results := []Result{
		{Cluster: Cluster{Context: "z"}, Outcome: Outcome{Statuses: both(missing)}},
		{Cluster: Cluster{Context: "y"}, Outcome: Outcome{Statuses: both(inStep)}},
		{Cluster: Cluster{Context: "x"}}, // failed: no statuses, not compared
	}
	got := Across(results)
	want := []ObjectAcross{{Object: "configmap/a", Source: "a.yaml", Clusters: 2,
		States: map[string][]string{InStepState: {"y"}, "not on the server": {"z"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Across = %+v\nwant %+v", got, want)
	}
	if got := Across(results[:1]); got != nil {
		t.Errorf("Across of one cluster = %+v, want nothing", got)
	}
}

// Pick takes a clusters file's order and labels, refuses a context the
// kubeconfig lacks, and otherwise sorts the kubeconfig's.
func TestPick(t *testing.T) {
	file := filepath.Join(t.TempDir(), "clusters.yaml")
	if err := os.WriteFile(file, []byte("clusters:\n- {context: us, labels: {region: us}}\n- {context: eu, labels: {region: eu}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	known := []string{"eu", "us", "dev"}
	got, err := Pick(Selection{Known: known, ClustersFile: file, Labels: labels.SelectorFromSet(labels.Set{"region": "eu"})})
	if err != nil || len(got) != 1 || got[0].Context != "eu" {
		t.Errorf("Pick(file, region=eu) = %v, %v; want eu", got, err)
	}
	if _, err := Pick(Selection{Known: []string{"eu"}, ClustersFile: file}); err == nil {
		t.Error("Pick of a clusters file naming a context not in the kubeconfig: no error")
	}
	got, err = Pick(Selection{Known: known, Patterns: []string{"*u*"}})
	if err != nil || !reflect.DeepEqual(got, []Cluster{{Context: "eu"}, {Context: "us"}}) {
		t.Errorf("Pick(*u*) = %v, %v; want eu, us", got, err)
	}
	got, err = Pick(Selection{Known: known, Planned: []string{"us", "dev"}})
	if err != nil || !reflect.DeepEqual(got, []Cluster{{Context: "us"}, {Context: "dev"}}) {
		t.Errorf("Pick(planned us, dev) = %v, %v; want us, dev in that order", got, err)
	}
}
