package merge

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// benchDeployment is a typical Deployment apply: an image bump, a label
// added, a live-only field and server defaults.
func benchDeployment(t testing.TB) (l, f, c map[string]any) {
	l = decodeYAML(t, `metadata: {name: web, labels: {app: web}}
spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [
  {name: web, image: "web:1", args: [--port=80], ports: [{containerPort: 80}], env: [{name: A, value: "1"}, {name: B, value: "2"}], resources: {limits: {cpu: "1"}}},
  {name: log, image: "log:1"}]}}}`)
	f = decodeYAML(t, `metadata: {name: web, labels: {app: web, tier: front}}
spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [
  {name: web, image: "web:2", args: [--port=80], ports: [{containerPort: 80}], env: [{name: A, value: "1"}, {name: C, value: "3"}], resources: {limits: {cpu: "1"}}},
  {name: log, image: "log:1"}]}}}`)
	c = decodeYAML(t, `metadata: {name: web, namespace: default, resourceVersion: "123", generation: 4, labels: {app: web}}
spec: {replicas: 5, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, selector: {matchLabels: {app: web}},
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}},
  template: {metadata: {labels: {app: web}}, spec: {restartPolicy: Always, dnsPolicy: ClusterFirst, schedulerName: default-scheduler, terminationGracePeriodSeconds: 30, containers: [
  {name: web, image: "web:1", args: [--port=80], imagePullPolicy: IfNotPresent, terminationMessagePath: /dev/termination-log, ports: [{containerPort: 80, protocol: TCP}], env: [{name: A, value: "1"}, {name: B, value: "2"}], resources: {limits: {cpu: "1"}}},
  {name: log, image: "log:1", imagePullPolicy: IfNotPresent}]}}}`)
	return l, f, c
}

// benchKeyedList is a Pod whose container has n env vars: the file changes
// one, drops one and adds one; live has a few the file does not manage.
func benchKeyedList(n int) (l, f, c map[string]any) {
	env := func(from, to int, value string) []any {
		out := make([]any, 0, to-from)
		for i := from; i < to; i++ {
			out = append(out, map[string]any{"name": fmt.Sprintf("VAR_%06d", i), "value": value})
		}
		return out
	}
	pod := func(vars []any) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "c", "image": "x", "env": vars},
		}}}
	}
	lv := env(0, n, "v")
	fv := append(env(1, n, "v"), map[string]any{"name": "NEW", "value": "n"})
	fv[n/2] = map[string]any{"name": fmt.Sprintf("VAR_%06d", n/2+1), "value": "changed"}
	cv := append(env(0, n, "v"), env(n, n+5, "live")...)
	return pod(lv), pod(fv), pod(cv)
}

func BenchmarkThreeWay(b *testing.B) {
	bs := builtins(b)
	cases := []struct {
		name    string
		kind    *builtin
		l, f, c map[string]any
	}{}
	l, f, c := benchDeployment(b)
	cases = append(cases, struct {
		name    string
		kind    *builtin
		l, f, c map[string]any
	}{"deployment", bs["Deployment"], l, f, c})
	for _, n := range []int{500, 5000, 50000} {
		l, f, c := benchKeyedList(n)
		cases = append(cases, struct {
			name    string
			kind    *builtin
			l, f, c map[string]any
		}{fmt.Sprintf("keyed-%d", n), bs["Pod"], l, f, c})
	}
	for _, tc := range cases {
		b.Run(tc.name+"/engine", func(b *testing.B) {
			for b.Loop() {
				if _, err := ThreeWay(tc.l, tc.f, tc.c, tc.kind.kind); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/apimachinery", func(b *testing.B) {
			if tc.name == "keyed-50000" && os.Getenv("KAPPLY_BENCH_LARGE") == "" {
				b.Skip("quadratic in apimachinery (minutes per op); set KAPPLY_BENCH_LARGE=1")
			}
			benchApimachinery(b, tc.kind, tc.l, tc.f, tc.c)
		})
	}
}

// benchApimachinery times kubectl's client side and the server's patch
// application, starting from JSON as kubectl does.
func benchApimachinery(b *testing.B, k *builtin, l, f, c map[string]any) {
	lj, fj, cj, err := encodeAll(l, f, c)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		patch, err := strategicpatch.CreateThreeWayMergePatch(lj, fj, cj, k.meta, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta(cj, patch, k.meta); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchmarkInputs keeps the benchmark inputs honest: both sides agree.
func TestBenchmarkInputs(t *testing.T) {
	bs := builtins(t)
	l, f, c := benchDeployment(t)
	checkAgainstOracle(t, bs["Deployment"], l, f, c)
	l, f, c = benchKeyedList(500)
	checkAgainstOracle(t, bs["Pod"], l, f, c)
}
