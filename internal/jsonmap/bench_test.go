package jsonmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// benchList is a LIST response of 2 MB of Deployments and
// ConfigMaps as the API server sends them: managedFields, a last-applied
// annotation (JSON in a string: many escapes), status.
func benchList(tb testing.TB) []byte {
	var items []any
	for i := range 300 {
		items = append(items, deployment(i), configMap(i))
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List",
		"metadata": map[string]any{"resourceVersion": "123456"}, "items": items})
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func metadata(kind string, i int, spec any) map[string]any {
	name := fmt.Sprintf("app-%04d", i)
	labels := map[string]any{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "bench", "tier": "backend"}
	applied, err := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "bench", "labels": labels}, "spec": spec})
	if err != nil {
		panic(err)
	}
	return map[string]any{
		"name": name, "namespace": "bench", "uid": fmt.Sprintf("8f2c1e3a-%04d-4b5c-9d6e-0123456789ab", i),
		"resourceVersion": fmt.Sprint(100000 + i), "generation": 3, "creationTimestamp": "2024-05-01T10:00:00Z",
		"labels":      labels,
		"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(applied) + "\n", "deployment.kubernetes.io/revision": "3"},
		"managedFields": []any{
			map[string]any{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
				"time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{
					"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:kubectl.kubernetes.io/last-applied-configuration": map[string]any{}},
						"f:labels": map[string]any{".": map[string]any{}, "f:app.kubernetes.io/name": map[string]any{}, "f:tier": map[string]any{}}},
					"f:spec": map[string]any{"f:replicas": map[string]any{}, "f:selector": map[string]any{}, "f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{`k:{"name":"app"}`: map[string]any{".": map[string]any{}, "f:image": map[string]any{}}}}}}}},
			map[string]any{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1", "subresource": "status",
				"time": "2024-05-01T10:00:05Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": map[string]any{"f:availableReplicas": map[string]any{}, "f:conditions": map[string]any{}}}},
		},
	}
}

func deployment(i int) map[string]any {
	container := map[string]any{"name": "app", "image": fmt.Sprintf("registry.example.com/team/app:v1.%d.0", i%17),
		"args":      []any{"--port=8080", "--log-level=info", fmt.Sprintf("--shard=%d", i)},
		"ports":     []any{map[string]any{"containerPort": 8080, "protocol": "TCP", "name": "http"}},
		"env":       []any{map[string]any{"name": "GOMAXPROCS", "value": "2"}, map[string]any{"name": "RATIO", "value": "0.75"}},
		"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}, "requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
		"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080, "scheme": "HTTP"},
			"initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
		"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}
	spec := map[string]any{"replicas": 2, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
		"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": fmt.Sprintf("app-%04d", i)}},
		"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": fmt.Sprintf("app-%04d", i)}},
			"spec": map[string]any{"containers": []any{container}, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
				"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "securityContext": map[string]any{}}}}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata("Deployment", i, spec), "spec": spec,
		"status": map[string]any{"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
			"conditions": []any{
				map[string]any{"type": "Available", "status": "True", "lastUpdateTime": "2024-05-01T10:00:05Z", "lastTransitionTime": "2024-05-01T10:00:05Z", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
				map[string]any{"type": "Progressing", "status": "True", "lastUpdateTime": "2024-05-01T10:00:05Z", "lastTransitionTime": "2024-05-01T10:00:00Z", "reason": "NewReplicaSetAvailable", "message": fmt.Sprintf("ReplicaSet \"app-%04d-5d8f7c9b6\" has successfully progressed.", i)}}}}
}

func configMap(i int) map[string]any {
	data := map[string]any{
		"app.yaml":   fmt.Sprintf("server:\n  port: 8080\n  shard: %d\nlogging:\n  level: info\n  format: \"json\"\nfeatures:\n  - name: a\n    enabled: true\n  - name: b\n    enabled: false\n", i),
		"LOG_LEVEL":  "info",
		"ratio":      "0.75",
		"motd.txt":   "Bienvenue — 欢迎 — ようこそ\tservice ready\n",
		"nginx.conf": "events {}\nhttp {\n  server {\n    listen 80;\n    location / { proxy_pass http://127.0.0.1:8080; }\n  }\n}\n",
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata("ConfigMap", i, data), "data": data}
}

func BenchmarkObject(b *testing.B) {
	data := benchList(b)
	b.Run("jsonmap", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Object(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("utiljson", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			m := map[string]any{}
			if err := utiljson.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The benchmark's list must decode as apimachinery decodes it.
func TestBenchListAgrees(t *testing.T) {
	if err := disagreement(benchList(t)); err != nil {
		t.Fatalf("%.300v", err)
	}
}

// BenchmarkObjectRealWorld decodes the real-world manifests as one list:
// mostly CRDs, whose long descriptions are long strings.
func BenchmarkObjectRealWorld(b *testing.B) {
	data := []byte(`{"apiVersion":"v1","kind":"List","metadata":{},"items":[` + string(bytes.Join(realObjects(b), []byte(","))) + `]}`)
	b.Run("jsonmap", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Object(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("utiljson", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			m := map[string]any{}
			if err := utiljson.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
