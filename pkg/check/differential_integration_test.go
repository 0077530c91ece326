package check_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/check"
	"github.com/kapply/kapply/pkg/plan"
)

// corpusVerdicts are what the corpus's policies say of after.yaml (and of
// the two objects pruning deletes), as outcome:policy (the policy's name
// without the namespace prefix). The differential test checks them
// against the server too; this list says the corpus covers each kind of
// verdict.
var corpusVerdicts = map[string][]string{
	"fine":             nil,
	"no-team":          {"denied:team"},
	"no-owner":         {"denied:owner"},
	"three-keys":       {"warned:size"},
	"debugging":        {"audited:debug"},
	"forbidden-word":   {"denied:words"},
	"param-missing":    {"denied:missing-param"},
	"everything-wrong": {"audited:debug", "denied:owner", "denied:team", "denied:words", "warned:size"},
	"small":            nil,
	"big":              {"denied:replicas"},
	"mode-changed":     {"denied:mode"},
	"mode-kept":        nil,
	"team-dropped":     {"denied:team"},
	"word-added":       {"denied:words"},
	"scaled-up":        {"denied:replicas"},
	"pruned-kept":      {"denied:keep"},
	"pruned":           nil,
}

// TestCheckPredictsTheServer is the differential test of issue 38: the
// corpus's policies (params by name and selector, matchConditions,
// variables, namespaceObject, messageExpression, Deny, Warn and Audit, a
// missing param) on creates, updates and prunes. Each item of the plan is
// then sent to the server as a dry run: every denial the server gives is
// predicted by the check, with its policy, binding and message, and no
// other; every warning it gives is a Warned verdict.
func TestCheckPredictsTheServer(t *testing.T) {
	testcluster.Require(t, cluster)
	ns, admin := corpusNamespace(t)
	p := planCorpus(t, admin, ns)
	checker, err := check.Load(context.Background(), admin.clients)
	if err != nil {
		t.Fatal(err)
	}
	if err := checker.Plan(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, it := range p.Items {
		seen[it.ID.Name] = true
		if got, want := summary(it.Verdicts, ns), corpusVerdicts[it.ID.Name]; !slices.Equal(got, want) {
			t.Errorf("%s (%s): verdicts %v, want %v (%+v)", it.ID.Name, it.Action, got, want, it.Verdicts)
		}
		compareWithServer(t, admin, it)
	}
	for name := range corpusVerdicts {
		if !seen[name] {
			t.Errorf("the plan has no item for %s", name)
		}
	}
}

// corpusNamespace makes a namespace with the corpus's params, before.yaml
// applied, and the policies bound in it, active on the server.
func corpusNamespace(t *testing.T) (string, *env) {
	ns := cluster.Namespace(t)
	admin := newEnv(t, cluster.Config)
	labelNamespace(t, admin, ns, map[string]string{"kapply-check": ns, "tier": "prod"})
	admin.create(readCorpus(t, "corpus/params.yaml", ns))
	events, err := admin.applier().Apply(context.Background(), apply.Input{Objects: readCorpus(t, "corpus/before.yaml", ns)}, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Err != nil {
			t.Fatalf("applying before.yaml: %v", ev.Err)
		}
	}
	admin.create(readCorpus(t, "corpus/policies.yaml", ns))
	// The last policy of the file denies this once the server has them all.
	admin.waitDenied(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "sentinel", "namespace": ns, "labels": map[string]any{"team": "a", "needs": "missing"}},
		"data":     map[string]any{"owner": "ann"}}}, ns+"-missing-param")
	return ns, admin
}

// planCorpus plans after.yaml, pruning by the corpus's label.
func planCorpus(t *testing.T, e *env, ns string) *plan.Plan {
	t.Helper()
	p, err := e.applier().Plan(context.Background(), apply.Input{Objects: readCorpus(t, "corpus/after.yaml", ns)}, apply.PlanOptions{
		Prune: &prune.Options{Selector: "corpus=check", Allowlist: []string{"core/v1/ConfigMap", "apps/v1/Deployment"}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// summary is verdicts as sorted outcome:policy words.
func summary(verdicts []plan.Verdict, ns string) []string {
	var out []string
	for _, v := range verdicts {
		out = append(out, string(v.Outcome)+":"+strings.TrimPrefix(v.Policy, ns+"-"))
	}
	slices.Sort(out)
	return out
}

var serverDenial = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']*)' with binding '([^']*)' denied request: (.*)$`)

// compareWithServer sends the item as a dry run and compares the server's
// answer with the item's verdicts.
func compareWithServer(t *testing.T, e *env, it plan.Item) {
	t.Helper()
	err := dryRun(e, it)
	warnings := e.warnings.take()
	var denied []plan.Verdict
	var warned []string
	for _, v := range it.Verdicts {
		switch v.Outcome {
		case plan.Denied:
			denied = append(denied, v)
		case plan.Warned:
			warned = append(warned, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", v.Policy, v.Binding, v.Message))
		}
	}
	if err == nil {
		if len(denied) > 0 {
			t.Errorf("%s: the check predicts a denial (%v), the server admits", it.ID.Name, denied)
		}
		slices.Sort(warned)
		slices.Sort(warnings)
		if !slices.Equal(warned, warnings) {
			t.Errorf("%s: server warnings %q, predicted %q", it.ID.Name, warnings, warned)
		}
		return
	}
	m := serverDenial.FindStringSubmatch(err.Error())
	if m == nil {
		t.Errorf("%s: the server refused, not by a policy: %v", it.ID.Name, err)
		return
	}
	if !slices.ContainsFunc(denied, func(v plan.Verdict) bool { return v.Policy == m[1] && v.Binding == m[2] && v.Message == m[3] }) {
		t.Errorf("%s: the server denies (%s / %s: %q), the check predicts %+v", it.ID.Name, m[1], m[2], m[3], denied)
	}
}

// dryRun sends the item's write as a server dry run.
func dryRun(e *env, it plan.Item) error {
	ctx := context.Background()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion(it.ID))
	obj.SetKind(it.ID.Kind)
	obj.SetNamespace(it.ID.Namespace)
	client := e.resource(obj)
	dry := []string{metav1.DryRunAll}
	switch it.Action {
	case plan.Create:
		_, err := client.Create(ctx, &unstructured.Unstructured{Object: it.Merged}, metav1.CreateOptions{DryRun: dry})
		return err
	case plan.Update:
		_, err := client.Patch(ctx, it.ID.Name, it.Patch.Type.K8s(), it.Patch.Data, metav1.PatchOptions{DryRun: dry})
		return err
	case plan.Prune, plan.Delete:
		return client.Delete(ctx, it.ID.Name, metav1.DeleteOptions{DryRun: dry})
	}
	return nil
}

func apiVersion(id plan.ID) string {
	if id.Group == "" {
		return id.Version
	}
	return id.Group + "/" + id.Version
}
