package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/merge"
)

// benchYAML is one object of hack/bench's tree at generation gen: a
// ConfigMap, a Deployment of two containers, a headless Service or a
// Widget custom resource, by i.
func benchYAML(i, gen int) string {
	meta := fmt.Sprintf("metadata:\n  name: app-%04d\n  namespace: bench-%d\n  labels:\n    app: app-%04d\n    bench.kapply.io/generation: \"%d\"\n", i, i%10, i, gen)
	switch i % 4 {
	case 0:
		return "apiVersion: v1\nkind: ConfigMap\n" + meta + fmt.Sprintf("data:\n  greeting: hello\n  index: \"%d\"\n  generation: \"%d\"\n  settings.json: '{\"replicas\": 2, \"generation\": %d}'\n", i, gen, gen)
	case 1:
		return "apiVersion: apps/v1\nkind: Deployment\n" + meta + fmt.Sprintf(`spec:
  replicas: 2
  selector:
    matchLabels:
      app: app-%04d
  template:
    metadata:
      labels:
        app: app-%04d
    spec:
      containers:
      - name: web
        image: registry.example/web:1.%d.0
        ports:
        - name: http
          containerPort: 8080
        env:
        - name: MODE
          value: bench
        - name: INDEX
          value: "%d"
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
          limits:
            cpu: 500m
            memory: 256Mi
      - name: sidecar
        image: registry.example/sidecar:2.%d.0
        ports:
        - name: metrics
          containerPort: 9090
        env:
        - name: TARGET
          value: localhost:8080
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
          limits:
            cpu: 100m
            memory: 64Mi
`, i, i, gen, i, gen)
	case 2:
		return "apiVersion: v1\nkind: Service\n" + meta + fmt.Sprintf("spec:\n  clusterIP: None\n  selector:\n    app: app-%04d\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n  - name: metrics\n    port: 9090\n    targetPort: 9090\n", i)
	}
	return "apiVersion: bench.kapply.io/v1\nkind: Widget\n" + meta + fmt.Sprintf("spec:\n  size: %d\n  image: registry.example/widget:3.%d.0\n", i, gen)
}

// benchLive is the object of generation 1 as the server keeps it after a
// client-side apply: its last-applied record, server metadata, the
// managedFields of every field, defaults and a status.
func benchLive(t testing.TB, i int) *unstructured.Unstructured {
	u := yamlObject(t, benchYAML(i, 1))
	record, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	md := u.Object["metadata"].(map[string]any)
	md["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(record)}
	md["uid"], md["resourceVersion"] = fmt.Sprintf("0f6c2f0e-1b7a-4c55-9b0e-%012d", i), fmt.Sprint(1000+i)
	md["creationTimestamp"], md["generation"] = "2026-11-29T04:00:00Z", int64(1)
	md["managedFields"] = []any{map[string]any{"apiVersion": u.GetAPIVersion(), "fieldsType": "FieldsV1",
		"fieldsV1": fieldsOf(u.Object), "manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-29T04:00:00Z"}}
	if u.GetKind() == "Deployment" {
		spec := u.Object["spec"].(map[string]any)
		spec["progressDeadlineSeconds"], spec["revisionHistoryLimit"] = int64(600), int64(10)
		spec["strategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}}
		pod := spec["template"].(map[string]any)["spec"].(map[string]any)
		pod["dnsPolicy"], pod["restartPolicy"], pod["schedulerName"] = "ClusterFirst", "Always", "default-scheduler"
		pod["securityContext"], pod["terminationGracePeriodSeconds"] = map[string]any{}, int64(30)
		u.Object["status"] = map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "readyReplicas": int64(2),
			"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastTransitionTime": "2026-11-29T04:00:05Z"}}}
	}
	return u
}

// fieldsOf is a FieldsV1 set of every field of obj.
func fieldsOf(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if m, ok := v.(map[string]any); ok {
			out["f:"+k] = fieldsOf(m)
		} else {
			out["f:"+k] = map[string]any{}
		}
	}
	return out
}

func yamlObject(t testing.TB, text string) *unstructured.Unstructured {
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return obj(t, string(data))
}

// benchPlan is the plan of generation 2 of n bench objects against
// generation 1 live, and the bytes of generation 2's YAML.
func benchPlan(t testing.TB, n int) (*Plan, int) {
	p := &Plan{Cluster: Cluster{Server: "https://bench"}}
	yamlBytes := 0
	for i := range n {
		text := benchYAML(i, 2)
		yamlBytes += len(text) + len("---\n")
		file, live := yamlObject(t, text), benchLive(t, i)
		var last map[string]any
		if err := json.Unmarshal([]byte(live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]), &last); err != nil {
			t.Fatal(err)
		}
		mp, err := merge.ThreeWay(last, file.Object, live.Object, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Items = append(p.Items, FromMerge(file, live, Source{File: "f.yaml", Index: i + 1}, mp, ownersOf{"kubectl-client-side-apply"}))
	}
	return p, yamlBytes
}

// TestSavedPlanOfBenchObjects: the plan of hack/bench's mixed objects,
// each changed, is at most 4 times the YAML it is made from (it was 60
// times: kept fields, managedFields and merged objects of every item,
// indented) and reads back.
func TestSavedPlanOfBenchObjects(t *testing.T) {
	p, yamlBytes := benchPlan(t, 200)
	var doc bytes.Buffer
	if err := Encode(&doc, p); err != nil {
		t.Fatal(err)
	}
	ratio := float64(doc.Len()) / float64(yamlBytes)
	t.Logf("%d items: %d bytes of YAML, a plan of %d bytes (%d per item, %.2f times the YAML)", len(p.Items), yamlBytes, doc.Len(), doc.Len()/len(p.Items), ratio)
	if ratio > 4 {
		t.Errorf("the plan is %.1f times the YAML it was made from, want at most 4", ratio)
	}
	got, err := Decode(&doc)
	if err != nil || len(got.Items) != len(p.Items) {
		t.Fatalf("decoding: %v", err)
	}
	if strings.Contains(fmt.Sprint(got.Items[1].Changes), "managedFields") {
		t.Error("a kept field in a decoded plan")
	}
}

// BenchmarkDecodeBenchPlan10000 decodes a plan of 10,000 bench objects
// and reports the file's bytes per item, its size against the YAML's, and
// the peak of the heap while decoding (sampled every millisecond), and
// while encoding it (beyond the plan itself) to a discarding writer.
func BenchmarkDecodeBenchPlan10000(b *testing.B) {
	p, yamlBytes := benchPlan(b, 10000)
	var doc bytes.Buffer
	if err := Encode(&doc, p); err != nil {
		b.Fatal(err)
	}
	data := doc.Bytes()
	runtime.GC()
	var held runtime.MemStats
	runtime.ReadMemStats(&held)
	encodePeak := heapPeakDuring(func() {
		if err := Encode(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}) - held.HeapAlloc
	p = nil
	var peak uint64
	for b.Loop() {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		peak = max(peak, heapPeakDuring(func() {
			if _, err := Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		})-base.HeapAlloc)
	}
	b.ReportMetric(float64(peak)/(1<<20), "decode-peak-heap-MiB")
	b.ReportMetric(float64(encodePeak)/(1<<20), "encode-peak-heap-MiB")
	b.ReportMetric(float64(len(data))/10000, "file-bytes/item")
	b.ReportMetric(float64(len(data))/float64(yamlBytes), "file/yaml")
}

// heapPeakDuring is the highest HeapAlloc seen while fn runs.
func heapPeakDuring(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}
