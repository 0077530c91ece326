package merge

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// ambiguousCase is an intended difference from kubectl: a keyed list with a
// duplicate merge key is merged by whole-element identity and replaced whole
// under resourceVersion; our own patch must still give our merged object.
type ambiguousCase struct {
	name              string
	lastApplied, file string
	live              string
	want              string
	warnAt            string
}

func TestAmbiguousKeys(t *testing.T) {
	pod := builtins(t)["Pod"]
	for _, tc := range []ambiguousCase{{
		name:        "duplicate env name in the file",
		lastApplied: `spec: {containers: [{name: c, env: [{name: A, value: "1"}]}]}`,
		file:        `spec: {containers: [{name: c, env: [{name: A, value: "1"}, {name: A, value: "2"}]}]}`,
		live: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, env: [{name: A, value: "1"}, {name: B, value: x}]}]}`,
		want: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, env: [{name: A, value: "1"}, {name: A, value: "2"}, {name: B, value: x}]}]}`,
		warnAt: "spec.containers[name=c].env",
	}, {
		name: "duplicate env name in live",
		file: `spec: {containers: [{name: c, env: [{name: A, value: "3"}]}]}`,
		live: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, env: [{name: A, value: "1"}, {name: B}, {name: A, value: "2"}]}]}`,
		want: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, env: [{name: A, value: "3"}, {name: B}]}]}`,
		warnAt: "spec.containers[name=c].env",
	}, {
		name: "same containerPort with two protocols in the file",
		file: `spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: TCP}, {containerPort: 53, protocol: UDP}]}]}`,
		live: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: TCP, name: dns-tcp}, {containerPort: 9090, protocol: TCP}]}]}`,
		want: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: TCP, name: dns-tcp}, {containerPort: 53, protocol: UDP}, {containerPort: 9090, protocol: TCP}]}]}`,
		warnAt: "spec.containers[name=c].ports",
	}, {
		name:        "same containerPort with two protocols in live",
		lastApplied: `spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: UDP}]}]}`,
		file:        `spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: UDP}]}]}`,
		live: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: TCP}, {containerPort: 53, protocol: UDP, hostPort: 53}]}]}`,
		want: `metadata: {resourceVersion: "42"}
spec: {containers: [{name: c, ports: [{containerPort: 53, protocol: UDP, hostPort: 53}]}]}`,
		warnAt: "spec.containers[name=c].ports",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			l, f, c := decodeYAML(t, tc.lastApplied), decodeYAML(t, tc.file), decodeYAML(t, tc.live)
			plan, err := ThreeWay(l, f, c, pod.kind)
			if err != nil {
				t.Fatalf("ThreeWay: %v", err)
			}
			if ok, d := sameObject(decodeYAML(t, tc.want), plan.Merged, false); !ok {
				t.Errorf("merged:\n%s", d)
			}
			checkOwnPatch(t, pod, c, plan)
			assertGuardedReplace(t, plan)
			assertWarningAt(t, plan, tc.warnAt)
			if kubectl, err := oracleMerged(l, f, c, pod.meta); err == nil {
				t.Logf("kubectl would produce: %v", kubectl["spec"])
			}
		})
	}
}

func assertGuardedReplace(t *testing.T, plan *Result) {
	t.Helper()
	if plan.Patch.Type != types.StrategicMergePatchType {
		t.Errorf("patch type %s", plan.Patch.Type)
	}
	var body map[string]any
	if err := json.Unmarshal(plan.Patch.Data, &body); err != nil {
		t.Fatalf("decoding patch: %v", err)
	}
	if asMap(body["metadata"])["resourceVersion"] != "42" {
		t.Errorf("patch %s lacks metadata.resourceVersion 42", plan.Patch.Data)
	}
	if !strings.Contains(string(plan.Patch.Data), `{"$patch":"replace"}`) {
		t.Errorf("patch %s does not replace the list", plan.Patch.Data)
	}
}

func assertWarningAt(t *testing.T, plan *Result, path string) {
	t.Helper()
	for _, w := range plan.Warnings {
		if w.Path.String() == path {
			return
		}
	}
	t.Errorf("no warning at %s; warnings: %v", path, plan.Warnings)
}

// TestIntendedDeleteDirectiveLeak: when live lacks an element that
// last-applied and the file share, and the file dropped some of that
// element's nested keyed elements, kubectl's patch carries `$patch: delete`
// entries which the server copies into the new element, leaving elements
// that hold only their key. The engine adds the element as the file has it.
func TestIntendedDeleteDirectiveLeak(t *testing.T) {
	pod := builtins(t)["Pod"]
	l := decodeYAML(t, `spec: {containers: [{name: c, env: [{name: A}, {name: GONE}]}]}`)
	f := decodeYAML(t, `spec: {containers: [{name: c, env: [{name: A}]}]}`)
	c := decodeYAML(t, `spec: {containers: []}`)
	plan, err := ThreeWay(l, f, c, pod.kind)
	if err != nil {
		t.Fatalf("ThreeWay: %v", err)
	}
	want := decodeYAML(t, `spec: {containers: [{name: c, env: [{name: A}]}]}`)
	if ok, d := sameObject(want, plan.Merged, false); !ok {
		t.Errorf("merged:\n%s", d)
	}
	checkOwnPatch(t, pod, c, plan)
	kubectl, err := oracleMerged(l, f, c, pod.meta)
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	t.Logf("kubectl would produce: %v", kubectl["spec"])
}

// TestIntendedNullInAtomicList: a null inside an element of an atomic list
// is dropped like any null from the file; kubectl keeps it when live has
// the list.
func TestIntendedNullInAtomicList(t *testing.T) {
	pod := builtins(t)["Pod"]
	f := decodeYAML(t, `spec: {tolerations: [{key: a, operator: Exists, effect: null}]}`)
	c := decodeYAML(t, `spec: {tolerations: [{key: b}]}`)
	plan, err := ThreeWay(nil, f, c, pod.kind)
	if err != nil {
		t.Fatalf("ThreeWay: %v", err)
	}
	want := decodeYAML(t, `spec: {tolerations: [{key: a, operator: Exists}]}`)
	if ok, d := sameObject(want, plan.Merged, false); !ok {
		t.Errorf("merged:\n%s", d)
	}
	checkOwnPatch(t, pod, c, plan)
}

// TestIntendedSetDuplicates: duplicate values in a set list collapse to the
// first; kubectl keeps them when live lacks the list.
func TestIntendedSetDuplicates(t *testing.T) {
	pod := builtins(t)["Pod"]
	f := decodeYAML(t, `metadata: {finalizers: [a, b, a]}`)
	c := decodeYAML(t, `metadata: {name: p}`)
	plan, err := ThreeWay(nil, f, c, pod.kind)
	if err != nil {
		t.Fatalf("ThreeWay: %v", err)
	}
	want := decodeYAML(t, `metadata: {name: p, finalizers: [a, b]}`)
	if ok, d := sameObject(want, plan.Merged, false); !ok {
		t.Errorf("merged:\n%s", d)
	}
	checkOwnPatch(t, pod, c, plan)
}

// TestIntendedOpaqueMapReplaced: a map of lists (a CertificateSigningRequest's
// spec.extra, map[string][]string) or of unknown content (a
// ControllerRevision's data, a RawExtension) has no Go struct field for its
// values, so apimachinery's strategic merge cannot merge into them: kubectl
// fails to compute its patch, and the server would reject one that merges
// into such a value. The engine merges the map key by key (values of unknown
// schema: maps merge, lists atomic) and sends it whole as `$patch: replace`,
// guarded by resourceVersion, which the server applies without looking in.
func TestIntendedOpaqueMapReplaced(t *testing.T) {
	bs := builtins(t)
	for _, tc := range []struct {
		name, kind              string
		lastApplied, file, live string
		want, kubectlErr        string
	}{{
		name:        "map of lists",
		kind:        "CertificateSigningRequest",
		lastApplied: `spec: {extra: {groups: [a]}}`,
		file:        `spec: {extra: {groups: [a, b]}}`,
		live:        `{metadata: {resourceVersion: "42"}, spec: {extra: {groups: [a], scopes: [x]}}}`,
		want:        `{metadata: {resourceVersion: "42"}, spec: {extra: {groups: [a, b], scopes: [x]}}}`,
		kubectlErr:  "data type is not struct",
	}, {
		name:        "unknown content",
		kind:        "ControllerRevision",
		lastApplied: `data: {a: {x: 1, gone: 0}}`,
		file:        `data: {a: {x: 2}}`,
		live:        `{metadata: {resourceVersion: "42"}, data: {a: {x: 1, gone: 0, z: 3}, b: [1]}}`,
		want:        `{metadata: {resourceVersion: "42"}, data: {a: {x: 2, z: 3}, b: [1]}}`,
		kubectlErr:  "unable to find api field",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := bs[tc.kind]
			l, f, c := decodeYAML(t, tc.lastApplied), decodeYAML(t, tc.file), decodeYAML(t, tc.live)
			if _, err := oracleMerged(l, f, c, b.meta); err == nil || !strings.Contains(err.Error(), tc.kubectlErr) {
				t.Errorf("kubectl's patch: error %v, want one containing %q", err, tc.kubectlErr)
			}
			plan, err := ThreeWay(l, f, c, b.kind)
			if err != nil {
				t.Fatalf("ThreeWay: %v", err)
			}
			if ok, d := sameObject(decodeYAML(t, tc.want), plan.Merged, false); !ok {
				t.Errorf("merged:\n%s", d)
			}
			checkOwnPatch(t, b, c, plan)
			if !strings.Contains(string(plan.Patch.Data), `"$patch":"replace"`) || !strings.Contains(string(plan.Patch.Data), `"resourceVersion":"42"`) {
				t.Errorf("patch %s: want the map replaced whole under resourceVersion 42", plan.Patch.Data)
			}
		})
	}
}

// TestIntendedNullInReplacedMap: a null inside a map with patch strategy
// replace is dropped like any null from the file; kubectl's patch carries it
// to the server inside the map that replaces live's, where it stays (and a
// map[string]string then decodes it as ""). The generator keeps nulls out of
// replaced maps, as out of atomic lists.
func TestIntendedNullInReplacedMap(t *testing.T) {
	pdb := builtins(t)["PodDisruptionBudget"]
	f := decodeYAML(t, `spec: {selector: {matchLabels: {app: web, tier: null}}}`)
	c := decodeYAML(t, `spec: {selector: {matchLabels: {app: web, tier: fe}}}`)
	plan, err := ThreeWay(nil, f, c, pdb.kind)
	if err != nil {
		t.Fatalf("ThreeWay: %v", err)
	}
	want := decodeYAML(t, `spec: {selector: {matchLabels: {app: web}}}`)
	if ok, d := sameObject(want, plan.Merged, false); !ok {
		t.Errorf("merged:\n%s", d)
	}
	checkOwnPatch(t, pdb, c, plan)
	kubectl, err := oracleMerged(nil, f, c, pdb.meta)
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	if labels := asMap(asMap(asMap(kubectl["spec"])["selector"])["matchLabels"]); !hasNull(labels, "tier") {
		t.Errorf("kubectl's result %v: want tier: null kept", labels)
	}
}

func hasNull(m map[string]any, k string) bool {
	v, ok := m[k]
	return ok && v == nil
}
