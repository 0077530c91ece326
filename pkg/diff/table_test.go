package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// TestPlanTableQuotesHostileNames: a name, namespace, kind or field from a
// file holding a CR, an escape sequence, a newline or a bidi control is
// quoted in the --confirm table: it cannot erase or forge the row of
// another object, whose patch would still run.
func TestPlanTableQuotesHostileNames(t *testing.T) {
	hostile := []string{"cr\rx", "erase\x1b[2K\rx", "nl\nshop   ConfigMap   fake   create", "bidi\u202ex", "ls\u2028x", "c1\u009bx"}
	p := &plan.Plan{}
	for _, name := range hostile {
		p.Items = append(p.Items, plan.Item{Action: plan.Update,
			ID:      plan.ID{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Cluster\x1bRole", Name: name, Namespace: "ns\r"},
			Changes: []plan.Change{{Path: fieldpath.Fields("rules", "x\ry"), Reason: plan.SetByFile}}})
	}
	p.Items = append(p.Items, plan.Item{Action: plan.Update, ID: plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "victim"},
		Changes: []plan.Change{{Path: fieldpath.Fields("data", "mode"), Reason: plan.SetByFile}}})
	var b bytes.Buffer
	WritePlanTable(&b, p)
	out := b.String()
	if strings.ContainsAny(out, "\r\x1b\u202e\u2028\u009b") {
		t.Errorf("a control character from a name reached the table:\n%q", out)
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if want := 1 + len(hostile) + 1 + 1; len(rows) != want { // header, rows, victim, counts
		t.Errorf("%d lines, want %d (a name added or removed a row):\n%s", len(rows), want, out)
	}
	for _, want := range []string{`"cr\rx"`, `"erase\x1b[2K\rx"`, `"bidi\u202ex"`, `"ns\r"`, `"Cluster\x1bRole.rbac.authorization.k8s.io"`, `rules["x\ry"]`, "victim"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %s:\n%s", want, out)
		}
	}
}
