package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// TestExecuteRefusesWhatTheFilesDoNotGive: a decoded plan whose patch was
// given a field the file does not set, or that holds a create of an object
// no file declares, or a prune of a declared object, is refused whole by
// Execute (ErrTampered, no events, each item named), nothing written; the
// plan as made then runs.
func TestExecuteRefusesWhatTheFilesDoNotGive(t *testing.T) {
	w := newPlanWorld(t, "plan-tamper")
	w.mustApply(w.configMap("a", map[string]any{"k": "1"}))
	files := func() apply.Input {
		return apply.Input{Objects: []*unstructured.Unstructured{w.configMap("a", map[string]any{"k": "2"})}}
	}
	p, _ := w.roundTrip(w.plan(files().Objects...))
	live := w.read(configMaps, "a")
	for name, edit := range map[string]func(p *plan.Plan){
		"patch": func(p *plan.Plan) {
			var body map[string]any
			if err := json.Unmarshal(p.Items[0].Patch.Data, &body); err != nil {
				t.Fatal(err)
			}
			body["data"].(map[string]any)["evil"] = "yes"
			data, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			p.Items[0].Patch.Data = data
		},
		"create": func(p *plan.Plan) {
			p.Items = append(p.Items, plan.NewCreate(w.configMap("evil", map[string]any{"k": "v"}), plan.Source{}))
		},
		"prune of a declared object": func(p *plan.Plan) {
			p.Items[0] = plan.NewRemoval(plan.Prune, live, plan.Source{})
		},
	} {
		doctored, _ := w.roundTrip(p)
		edit(doctored)
		doctored, _ = w.roundTrip(doctored)
		events, err := w.applier.Execute(context.Background(), doctored, apply.ExecuteOptions{Objects: files(), PruneAll: true})
		var tampered *apply.TamperedError
		if !errors.Is(err, apply.ErrTampered) || !errors.As(err, &tampered) || len(tampered.Items) != 1 || events != nil {
			t.Errorf("%s: %v, %d events; want the plan refused naming one item", name, err, len(events))
			continue
		}
		t.Logf("%s: %v", name, err)
		if a := w.read(configMaps, "a"); dataOf(a, "k") != "1" || dataOf(a, "evil") != "" {
			t.Errorf("%s: a was written: %v", name, a.Object["data"])
		}
		if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "evil", metav1.GetOptions{}); err == nil {
			t.Errorf("%s: evil was created", name)
		}
	}
	events := w.execute(p, apply.ExecuteOptions{Objects: files()})
	if events[0].Outcome != apply.Configured || dataOf(w.read(configMaps, "a"), "k") != "2" {
		t.Errorf("the plan as made: %v %v, want configured", events[0].Outcome, events[0].Err)
	}
	if strings.Contains(dataOf(w.read(configMaps, "a"), "evil"), "yes") {
		t.Errorf("a holds data.evil")
	}
}
