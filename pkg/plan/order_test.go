package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func cm(name, annotations string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: app\n  annotations: {" + annotations + "}\n"
}

func TestOrderPlainRunIsOneStep(t *testing.T) {
	nodes := orderNodes(t, cm("a", "")+"---\n"+cm("b", `other: "x"`))
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Ordering{Waves: []int{0, 0}, Reasons: []string{"", ""}, Gates: []Gate{{}}}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("got %+v, want %+v", o, want)
	}
}

func TestOrderSyncWaves(t *testing.T) {
	nodes := orderNodes(t, strings.Join([]string{
		cm("late", `argocd.argoproj.io/sync-wave: "2"`),
		cm("plain", ""),
		cm("early", `argocd.argoproj.io/sync-wave: "-1"`),
		cm("zero", `argocd.argoproj.io/sync-wave: "0"`),
		cm("late2", `argocd.argoproj.io/sync-wave: "2"`),
	}, "---\n"))
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if want := []int{2, 1, 0, 1, 2}; !reflect.DeepEqual(o.Waves, want) {
		t.Fatalf("waves %v, want %v", o.Waves, want)
	}
	if want := []string{"sync-wave 2", "sync-wave 0", "sync-wave -1", "sync-wave 0", "sync-wave 2"}; !reflect.DeepEqual(o.Reasons, want) {
		t.Fatalf("reasons %q, want %q", o.Reasons, want)
	}
	wantGates := []Gate{{}, {Ready: []ID{nodes[2].ID}}, {Ready: []ID{nodes[1].ID, nodes[3].ID}}}
	if !reflect.DeepEqual(o.Gates, wantGates) {
		t.Fatalf("gates %+v, want %+v", o.Gates, wantGates)
	}
}

// TestOrderDependsOnSplitsAWave: a chain inside a wave takes one step per
// link, by longest path; each step waits for what its nodes depend on.
func TestOrderDependsOnSplitsAWave(t *testing.T) {
	nodes := orderNodes(t, strings.Join([]string{
		cm("migrate", `config.kubernetes.io/depends-on: "apps/namespaces/app/StatefulSet/pg"`),
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: pg, namespace: app, annotations: {config.kubernetes.io/depends-on: /namespaces/app/Secret/pw}}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: pw, namespace: app}\n",
		// depends on the head and the tail: goes after the longest path.
		cm("web", `config.kubernetes.io/depends-on: "/namespaces/app/Secret/pw, /namespaces/app/ConfigMap/migrate"`),
		cm("other", ""),
		// a dependency on an earlier wave is kept by the wave boundary.
		cm("after", `argocd.argoproj.io/sync-wave: "1", config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/web`),
	}, "---\n"))
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if want := []int{2, 1, 0, 3, 0, 4}; !reflect.DeepEqual(o.Waves, want) {
		t.Fatalf("waves %v, want %v", o.Waves, want)
	}
	if o.Reasons[3] != "depends-on /namespaces/app/ConfigMap/migrate" || o.Reasons[0] != "depends-on apps/namespaces/app/StatefulSet/pg" {
		t.Fatalf("reasons %q", o.Reasons)
	}
	if o.Reasons[5] != "sync-wave 1" {
		t.Fatalf("reason of the wave-1 object: %q", o.Reasons[5])
	}
	id := func(i int) ID { return nodes[i].ID }
	wantGates := []Gate{{}, {Ready: []ID{id(2)}}, {Ready: []ID{id(1)}}, {Ready: []ID{id(0), id(2)}},
		{Ready: []ID{id(0), id(1), id(2), id(3), id(4)}}}
	if !reflect.DeepEqual(o.Gates, wantGates) {
		t.Fatalf("gates %+v\nwant %+v", o.Gates, wantGates)
	}
}

// TestOrderRefusesDeclaredOrders: each problem is an OrderError naming
// the object (and the value or reference); all are reported at once.
func TestOrderRefusesDeclaredOrders(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		kind   OrderProblemKind
		want   string
	}{
		{"non-integer wave", cm("a", `argocd.argoproj.io/sync-wave: "one"`), InvalidSyncWave,
			`ConfigMap/a -n app: argocd.argoproj.io/sync-wave "one" is not an integer`},
		{"depends-on a later wave", cm("a", `config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/b`) + "---\n" +
			cm("b", `argocd.argoproj.io/sync-wave: "3"`), DependencyLaterWave,
			`ConfigMap/a -n app: (sync-wave 0) depends on ConfigMap/b -n app (sync-wave 3), which runs later`},
		{"duplicate", cm("a", `config.kubernetes.io/depends-on: "/namespaces/app/ConfigMap/b,/namespaces/app/ConfigMap/b"`) + "---\n" +
			cm("b", ""), DuplicateDependency,
			`ConfigMap/a -n app: config.kubernetes.io/depends-on names /namespaces/app/ConfigMap/b twice`},
		{"not in the run", cm("a", `config.kubernetes.io/depends-on: apps/namespaces/db/StatefulSet/pg`), DependencyNotInRun,
			`ConfigMap/a -n app: depends on apps/namespaces/db/StatefulSet/pg, which is not in the run`},
		{"a version is not part of a reference", cm("a", `config.kubernetes.io/depends-on: v1/namespaces/app/ConfigMap/b`) + "---\n" +
			cm("b", ""), DependencyNotInRun, `depends on v1/namespaces/app/ConfigMap/b, which is not in the run (a reference names the group, empty for core, not the version: write /namespaces/app/ConfigMap/b)`},
		{"namespaced without namespace", cm("a", `config.kubernetes.io/depends-on: /ConfigMap/b`) + "---\n" + cm("b", ""),
			DependencyNotInRun, `(ConfigMap/b -n app is namespaced: write /namespaces/app/ConfigMap/b)`},
		{"cluster-scoped with namespace", cm("a", `config.kubernetes.io/depends-on: /namespaces/app/Namespace/app`) + "---\n" +
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n",
			DependencyNotInRun, `(Namespace/app is cluster-scoped: write /Namespace/app)`},
		{"bad syntax", cm("a", `config.kubernetes.io/depends-on: "apps/Deployment"`), InvalidDependsOn,
			`ConfigMap/a -n app: reading reference 0 of config.kubernetes.io/depends-on: "apps/Deployment": expected`},
		{"cycle named in order", cm("a", `config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/b`) + "---\n" +
			cm("c", `config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/a`) + "---\n" +
			cm("b", `config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/c`) + "---\n" + cm("d", ""), DependencyCycle,
			`depends-on cycle: ConfigMap/a -n app → ConfigMap/b -n app → ConfigMap/c -n app → ConfigMap/a -n app`},
		{"depends on itself", cm("a", `config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/a`), DependencyCycle,
			`depends-on cycle: ConfigMap/a -n app → ConfigMap/a -n app`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Order(orderNodes(t, tt.stream), nil)
			var oe *OrderError
			if !errors.As(err, &oe) {
				t.Fatalf("want an OrderError, got %v", err)
			}
			if len(oe.Problems) != 1 || oe.Problems[0].Kind != tt.kind {
				t.Fatalf("problems %+v, want one %s", oe.Problems, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q\ndoes not say %q", err, tt.want)
			}
		})
	}
}

// TestOrderReportsEveryProblem: all problems at once, in input order,
// each naming its file (and line when known).
func TestOrderReportsEveryProblem(t *testing.T) {
	nodes := orderNodes(t, cm("a", `argocd.argoproj.io/sync-wave: "x"`)+"---\n"+cm("b", `config.kubernetes.io/depends-on: /namespaces/app/ConfigMap/zz`))
	nodes[0].Source = Source{File: "app/a.yaml", Index: 1, Line: 3}
	nodes[1].Source = Source{File: "app/b.yaml", Index: 1}
	_, err := Order(nodes, nil)
	var oe *OrderError
	if !errors.As(err, &oe) || len(oe.Problems) != 2 || oe.Problems[0].Node != 0 || oe.Problems[1].Node != 1 {
		t.Fatalf("got %v", err)
	}
	want := `ordering the run: 2 problems; app/a.yaml:3: ConfigMap/a -n app: argocd.argoproj.io/sync-wave "x" is not an integer; ` +
		`app/b.yaml: ConfigMap/b -n app: depends on /namespaces/app/ConfigMap/zz, which is not in the run`
	if err.Error() != want {
		t.Fatalf("error %q\nwant  %q", err, want)
	}
}

func TestOrderWarnsAboutHooks(t *testing.T) {
	nodes := orderNodes(t, cm("a", `helm.sh/hook: pre-install`)+"---\n"+cm("b", `argocd.argoproj.io/hook: PreSync`))
	nodes[0].Source = Source{File: "chart/hook.yaml", Line: 7}
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"chart/hook.yaml:7: ConfigMap/a -n app: annotation helm.sh/hook=pre-install is not honoured: the object is applied like any other",
		"ConfigMap/b -n app: annotation argocd.argoproj.io/hook=PreSync is not honoured: the object is applied like any other",
	}
	if !reflect.DeepEqual(o.Warnings, want) || !reflect.DeepEqual(o.Waves, []int{0, 0}) {
		t.Fatalf("got %+v", o)
	}
}
