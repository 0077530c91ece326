package health_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/health"
)

func TestParseReadsAListOfRules(t *testing.T) {
	rules, err := health.Parse([]byte(`
- apiVersion: example.com/v1
  kind: Database
  current: status.phase == "Ready"
  failed: status.phase == "Broken"
  inProgress: status.phase == "Migrating"
- apiVersion: v1
  kind: ConfigMap
  current: has(data.ready)
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []health.Rule{
		{APIVersion: "example.com/v1", Kind: "Database", Current: `status.phase == "Ready"`, Failed: `status.phase == "Broken"`, InProgress: `status.phase == "Migrating"`},
		{APIVersion: "v1", Kind: "ConfigMap", Current: "has(data.ready)"},
	}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules:\n%+v\nwant\n%+v", rules, want)
	}
}

func TestParseReadsAFluxKustomization(t *testing.T) {
	rules, err := health.Parse([]byte(`---
# the Kustomization that applies the certificates
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: certs, namespace: flux-system}
spec:
  interval: 5m
  path: ./certs
  wait: true
  healthCheckExprs:
  - apiVersion: cert-manager.io/v1
    kind: Certificate
    inProgress: "status.conditions.filter(e, e.type == 'Issuing').all(e, e.observedGeneration == metadata.generation && e.status == 'True')"
    failed: "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'False')"
    current: "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'True')"
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Kind != "Certificate" || rules[0].APIVersion != "cert-manager.io/v1" ||
		!strings.Contains(rules[0].InProgress, "'Issuing'") || !strings.Contains(rules[0].Failed, "'False'") || !strings.Contains(rules[0].Current, "'True'") {
		t.Errorf("rules: %+v", rules)
	}
}

// TestParseRefuses: every refusal names what is wrong; an entry's error
// names its place, apiVersion and kind, and the field.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"not YAML", "- [", []string{"reading the health rules"}},
		{"a map that is no Kustomization", "current: x\n", []string{"(none) (none)"}},
		{"a number", "3\n", []string{"neither a list of rules nor a Flux Kustomization"}},
		{"a string", `"status.phase == 'Ready'"`, []string{"neither a list of rules nor a Flux Kustomization"}},
		{"another kind", "apiVersion: v1\nkind: ConfigMap\n", []string{`"v1" "ConfigMap"`, "not a list of rules nor a Flux Kustomization"}},
		{"another Kustomization version", "apiVersion: kustomize.toolkit.fluxcd.io/v1beta2\nkind: Kustomization\nspec: {healthCheckExprs: []}\n",
			[]string{`"kustomize.toolkit.fluxcd.io/v1beta2" "Kustomization"`}},
		{"a kustomize.config.k8s.io Kustomization", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
			[]string{`"kustomize.config.k8s.io/v1beta1"`}},
		{"no healthCheckExprs", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec: {wait: true}\n", []string{"no spec.healthCheckExprs"}},
		{"healthCheckExprs not a list", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec: {healthCheckExprs: {current: x}}\n",
			[]string{"spec.healthCheckExprs is not a list"}},
		{"empty list", "[]\n", []string{"holds no rule"}},
		{"empty file", "# nothing\n---\n", []string{"holds no rule"}},
		{"two documents", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec: {healthCheckExprs: [{apiVersion: v1, kind: Pod, current: x}]}\n---\n" +
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec: {healthCheckExprs: [{apiVersion: v1, kind: Pod, current: y}]}\n",
			[]string{"holds 2 YAML documents: one is read"}},
		{"empty Kustomization list", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec: {healthCheckExprs: []}\n", []string{"holds no rule"}},
		{"entry not a map", "- current: x\n  apiVersion: v1\n  kind: Pod\n- just a string\n", []string{"health rule [1]: is not a map"}},
		{"unknown field", "- {apiVersion: example.com/v1, kind: Database, current: x, inprogress: y}\n",
			[]string{"health rule [0] (example.com/v1 Database) inprogress: is not a field of a health rule"}},
		{"expression not a string", "- {apiVersion: example.com/v1, kind: Database, current: true}\n",
			[]string{"health rule [0] (example.com/v1 Database) current: is not a string"}},
		{"no current", "- {apiVersion: example.com/v1, kind: Database, failed: x}\n",
			[]string{"health rule [0] (example.com/v1 Database) current: is required"}},
		{"no current in a Kustomization", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec:\n  healthCheckExprs:\n  - {apiVersion: example.com/v1, kind: Database, current: x}\n  - {apiVersion: example.com/v1, kind: Table, inProgress: x}\n",
			[]string{"health rule spec.healthCheckExprs[1] (example.com/v1 Table) current: is required"}},
		{"no kind", "- {apiVersion: example.com/v1, current: x}\n", []string{"health rule [0] (example.com/v1 ) kind: is required"}},
		{"no apiVersion", "- {kind: Database, current: x}\n", []string{"health rule [0] ( Database) apiVersion: is required"}},
		{"bad apiVersion", "- {apiVersion: a/b/c, kind: Database, current: x}\n", []string{"health rule [0] (a/b/c Database) apiVersion: is not group/version"}},
		{"duplicate group and kind", "- {apiVersion: example.com/v1, kind: Database, current: x}\n- {apiVersion: v1, kind: ConfigMap, current: x}\n- {apiVersion: example.com/v2, kind: Database, current: z}\n",
			[]string{"health rule [2] (example.com/v2 Database)", "second rule for Database.example.com (the first is [0])"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := health.Parse([]byte(tc.file))
			if err == nil {
				t.Fatalf("no error; rules %+v", rules)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var ruleErr *health.RuleError
			if strings.HasPrefix(err.Error(), "health rule ") != errors.As(err, &ruleErr) {
				t.Errorf("error %q: a rule's error is a *health.RuleError, and only that", err)
			}
		})
	}
}
