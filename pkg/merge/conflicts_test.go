package merge

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// TestConflicts: the fields --overwrite=false refuses are those the plan
// changes and someone else changed since the last apply, exactly where
// apimachinery's CreateThreeWayMergePatch with overwrite false reports a
// conflict (checked on each scenario).
func TestConflicts(t *testing.T) {
	dep := builtins(t)["Deployment"]
	cases := []struct {
		name    string
		l, f, c string
		want    []string
	}{
		{"nobody else changed anything", `spec: {replicas: 1}`, `spec: {replicas: 2}`, `spec: {replicas: 1}`, nil},
		{"both changed it, differently", `spec: {replicas: 1}`, `spec: {replicas: 2}`, `spec: {replicas: 3}`, []string{"spec.replicas"}},
		{"both changed it alike", `spec: {replicas: 1}`, `spec: {replicas: 2}`, `spec: {replicas: 2}`, nil},
		{"changed live, the file re-asserts its value", `spec: {replicas: 1}`, `spec: {replicas: 1}`, `spec: {replicas: 3}`, []string{"spec.replicas"}},
		{"changed live, the file changes another field", `spec: {replicas: 1, paused: false}`, `spec: {replicas: 1, paused: true}`, `spec: {replicas: 1, paused: false, minReadySeconds: 5}`, nil},
		{"deleted live, the file sets it", `spec: {replicas: 1}`, `spec: {replicas: 2}`, `spec: {}`, []string{"spec.replicas"}},
		{"the file drops what someone changed", `spec: {replicas: 1, paused: true}`, `spec: {replicas: 1}`, `spec: {replicas: 1, paused: false}`, []string{"spec.paused"}},
		{"the file drops what nobody touched", `spec: {replicas: 1, paused: true}`, `spec: {replicas: 1}`, `spec: {replicas: 1, paused: true}`, nil},
		{"a container changed live",
			`spec: {template: {spec: {containers: [{name: web, image: a}]}}}`,
			`spec: {template: {spec: {containers: [{name: web, image: b}]}}}`,
			`spec: {template: {spec: {containers: [{name: web, image: c}]}}}`,
			[]string{"spec.template.spec.containers[name=web].image"}},
		{"another container changed live",
			`spec: {template: {spec: {containers: [{name: web, image: a}, {name: side, image: s}]}}}`,
			`spec: {template: {spec: {containers: [{name: web, image: b}, {name: side, image: s}]}}}`,
			`spec: {template: {spec: {containers: [{name: web, image: a}, {name: side, image: t}]}}}`,
			[]string{"spec.template.spec.containers[name=side].image"}},
		{"the file reorders a list someone changed",
			`metadata: {finalizers: [a, b]}`,
			`metadata: {finalizers: [b, a]}`,
			`metadata: {finalizers: [a, b, c]}`,
			nil},
		{"the file deletes (null) what someone changed",
			`spec: {strategy: {type: RollingUpdate}}`,
			`spec: {strategy: null}`,
			`spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 2}}}`,
			[]string{"spec.strategy"}},
		{"no record: an existing field changed", ``, `spec: {replicas: 2}`, `spec: {replicas: 1}`, []string{"spec.replicas"}},
		{"no record: a new field", ``, `spec: {paused: true}`, `spec: {replicas: 1}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l map[string]any
			if tc.l != "" {
				l = decodeYAML(t, tc.l)
			}
			f, c := decodeYAML(t, tc.f), decodeYAML(t, tc.c)
			plan := checkAgainstOracle(t, dep, l, f, c)
			var got []string
			for _, p := range plan.Conflicts(dep.kind, l, f, c, nil) {
				got = append(got, p.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("conflicts %q, want %q", got, tc.want)
			}
			if theirs := oracleConflicts(t, l, f, c, dep.meta); theirs != (len(tc.want) > 0) {
				t.Errorf("apimachinery with overwrite false: conflict %v; kapply: %q", theirs, got)
			}
		})
	}
}

// oracleConflicts tells whether apimachinery, with overwrite false, refuses
// the triple as kubectl apply --overwrite=false does.
func oracleConflicts(t *testing.T, l, f, c map[string]any, meta strategicpatch.LookupPatchMeta) bool {
	t.Helper()
	lj, fj, cj, err := encodeAll(l, f, c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = strategicpatch.CreateThreeWayMergePatch(lj, fj, cj, meta, false)
	if err != nil && !mergepatch.IsConflict(err) {
		t.Fatal(fmt.Errorf("oracle: %w", err))
	}
	return err != nil
}
