package export

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
)

func fromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestExportDeployment(t *testing.T) {
	live := fromYAML(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 1234
  resourceVersion: "9"
  generation: 1
  creationTimestamp: "2024-01-01T00:00:00Z"
  managedFields: [{manager: kubectl-create}]
  labels: {app: web}
  annotations:
    deployment.kubernetes.io/revision: "1"
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  replicas: 1
  progressDeadlineSeconds: 600
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}
  template:
    metadata: {creationTimestamp: null, labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        ports: [{containerPort: 80, protocol: TCP}, {containerPort: 53, protocol: UDP}]
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      - name: tools
        image: busybox
        imagePullPolicy: IfNotPresent
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 45
status: {replicas: 1}
`)
	want := fromYAML(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}]
      - name: tools
        image: busybox
        imagePullPolicy: IfNotPresent
      terminationGracePeriodSeconds: 45
`)
	got, notes := Export(live)
	if !reflect.DeepEqual(got.Object, want.Object) {
		gotYAML, _ := yaml.Marshal(got.Object)
		t.Errorf("export:\n%s", gotYAML)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "spec.replicas=1") {
		t.Errorf("notes: %q", notes)
	}
	if _, ok := live.Object["status"]; !ok {
		t.Error("Export modified its input")
	}
}

func TestExportService(t *testing.T) {
	live := fromYAML(t, `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  clusterIP: 10.0.0.7
  clusterIPs: [10.0.0.7]
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports:
  - {port: 80, protocol: TCP, targetPort: 80}
  - {name: alt, port: 81, protocol: TCP, targetPort: 8081}
  selector: {app: web}
  sessionAffinity: None
  type: ClusterIP
status: {loadBalancer: {}}
`)
	want := fromYAML(t, `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports:
  - {port: 80}
  - {name: alt, port: 81, targetPort: 8081}
  selector: {app: web}
`)
	got, notes := Export(live)
	if !reflect.DeepEqual(got.Object, want.Object) || notes != nil {
		gotYAML, _ := yaml.Marshal(got.Object)
		t.Errorf("export:\n%s\nnotes %q", gotYAML, notes)
	}
}

func TestExportUnknownKindNotes(t *testing.T) {
	live := fromYAML(t, fixture.Widget(fixture.WidgetGroup, "", "w", "size: 3"))
	live.SetUID("x")
	got, notes := Export(live)
	if _, has := got.Object["metadata"].(map[string]any)["uid"]; has {
		t.Error("uid kept")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "no table of server defaults for kind Widget") {
		t.Errorf("notes: %q", notes)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.27": "IfNotPresent",
		"localhost:5000/nginx": "Always", "localhost:5000/nginx:1": "IfNotPresent", "nginx@sha256:abc": "IfNotPresent",
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
}
