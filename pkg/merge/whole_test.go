package merge

import (
	"slices"
	"testing"

	"github.com/kapply/kapply/pkg/schema"
)

// wholeCase: a three-way merge and the paths its patch replaces whole.
type wholeCase struct {
	name                    string
	lastApplied, file, live string
	want                    []string
}

func checkWhole(t *testing.T, kind *schema.Kind, cases []wholeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l map[string]any
			if tc.lastApplied != "" {
				l = decodeYAML(t, tc.lastApplied)
			}
			p, err := ThreeWay(l, decodeYAML(t, tc.file), decodeYAML(t, tc.live), kind)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range p.Whole {
				got = append(got, w.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("whole %q, want %q\npatch %s", got, tc.want, p.Patch.Data)
			}
		})
	}
}

// TestWholeOfMergePatch: a JSON merge patch replaces every list it sends
// and every value it deletes; maps merge.
func TestWholeOfMergePatch(t *testing.T) {
	const meta = `metadata: {name: x, resourceVersion: "9"}` + "\n"
	checkWhole(t, crKind(), []wholeCase{{
		name:        "a keyed list's element changes: the list goes whole",
		lastApplied: `spec: {items: [{name: a, value: "1"}]}`,
		file:        `spec: {items: [{name: a, value: "2"}]}`,
		live:        meta + `spec: {items: [{name: a, value: "1"}, {name: ctrl}]}`,
		want:        []string{"spec.items"},
	}, {
		name:        "a set and an atomic list",
		lastApplied: `spec: {tags: [a], args: [x]}`,
		file:        `spec: {tags: [a, b], args: [y]}`,
		live:        meta + `spec: {tags: [a], args: [x]}`,
		want:        []string{"spec.args", "spec.tags"},
	}, {
		name:        "a list dropped from the file is deleted whole",
		lastApplied: `spec: {items: [{name: a}], size: 1}`,
		file:        `spec: {size: 1}`,
		live:        meta + `spec: {items: [{name: a}], size: 1}`,
		want:        []string{"spec.items"},
	}, {
		name:        "a new subtree's lists",
		lastApplied: ``,
		file:        `spec: {size: 1, items: [{name: a}]}`,
		live:        meta,
		want:        []string{"spec.items"},
	}, {
		name:        "scalars and map fields replace nothing whole",
		lastApplied: `spec: {size: 1, free: {a: 1}}`,
		file:        `spec: {size: 2, free: {a: 2, b: 3}}`,
		live:        meta + `spec: {size: 1, free: {a: 1}}`,
		want:        nil,
	}})
}

// TestWholeOfStrategicPatch: a strategic merge patch merges keyed and set
// lists element by element; an atomic list, a retainKeys map, a value
// deleted by null and an element deleted by $patch: delete go whole.
func TestWholeOfStrategicPatch(t *testing.T) {
	deployment := func(spec string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: " + spec + "\n"
	}
	pod := func(containers string) string {
		return deployment(`{selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: ` + containers + `}}}`)
	}
	const web = "spec.template.spec.containers[name=web]"
	checkWhole(t, builtins(t)["Deployment"].kind, []wholeCase{{
		name:        "an env var's value: merged by key",
		lastApplied: pod(`[{name: web, image: i, env: [{name: A, value: "1"}]}]`),
		file:        pod(`[{name: web, image: i, env: [{name: A, value: "2"}]}]`),
		live:        pod(`[{name: web, image: i, env: [{name: A, value: "1"}, {name: CTRL, value: c}]}]`),
		want:        nil,
	}, {
		name:        "args: an atomic list",
		lastApplied: pod(`[{name: web, image: i, args: [a]}]`),
		file:        pod(`[{name: web, image: i, args: [b]}]`),
		live:        pod(`[{name: web, image: i, args: [a]}]`),
		want:        []string{web + ".args"},
	}, {
		name:        "env dropped from the file: deleted by null",
		lastApplied: pod(`[{name: web, image: i, env: [{name: A, value: "1"}]}]`),
		file:        pod(`[{name: web, image: i}]`),
		live:        pod(`[{name: web, image: i, env: [{name: A, value: "1"}]}]`),
		want:        []string{web + ".env"},
	}, {
		name:        "a container dropped: deleted by $patch: delete",
		lastApplied: pod(`[{name: web, image: i}, {name: old, image: o}]`),
		file:        pod(`[{name: web, image: i}]`),
		live:        pod(`[{name: web, image: i}, {name: old, image: o}]`),
		want:        []string{"spec.template.spec.containers[name=old]"},
	}, {
		name:        "strategy: a retainKeys map",
		lastApplied: deployment(`{strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}`),
		file:        deployment(`{strategy: {type: Recreate}}`),
		live:        deployment(`{strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}`),
		want:        []string{"spec.strategy"},
	}, {
		name:        "a new container's atomic list",
		lastApplied: pod(`[{name: web, image: i}]`),
		file:        pod(`[{name: web, image: i}, {name: side, image: s, command: [run]}]`),
		live:        pod(`[{name: web, image: i}]`),
		want:        []string{"spec.template.spec.containers[name=side].command"},
	}})
}
