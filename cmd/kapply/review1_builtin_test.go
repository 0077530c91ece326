package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var reviewServices = k8sschema.GroupVersionResource{Version: "v1", Resource: "services"}

func reviewService(ports string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  selector: {app: s}\n  ports: " + ports + "\n"
}

func reviewPlanThenRun(t *testing.T, ns, name, first, second string, between func()) result {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, name, first)
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, name, second)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	if between != nil {
		between()
	}
	return kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
}

func TestReview1WholeBuiltins(t *testing.T) {
	t.Run("service drops a port nobody else", func(t *testing.T) {
		ns := cluster.Namespace(t)
		r := reviewPlanThenRun(t, ns, "s.yaml",
			reviewService("[{name: a, port: 80}, {name: b, port: 81, protocol: UDP}]"),
			reviewService("[{name: a, port: 80}]"), nil)
		if r.code != 0 {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("deployment drops a container port nobody else", func(t *testing.T) {
		ns := cluster.Namespace(t)
		r := reviewPlanThenRun(t, ns, "d.yaml",
			envDeployment("ports: [{containerPort: 80}, {containerPort: 81, protocol: UDP}]"),
			envDeployment("ports: [{containerPort: 80}]"), nil)
		if r.code != 0 {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("duplicate env names controller adds", func(t *testing.T) {
		ns := cluster.Namespace(t)
		r := reviewPlanThenRun(t, ns, "d.yaml",
			envDeployment(`env: [{name: A, value: "1"}, {name: A, value: "2"}]`),
			envDeployment(`env: [{name: A, value: "1"}, {name: A, value: "3"}]`), func() {
				patch := `[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"CTRL","value":"c"}}]`
				if _, err := dynamicClient(t).Resource(deploymentsGVR).Namespace(ns).Patch(context.Background(), "web", types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "controller"}); err != nil {
					t.Fatal(err)
				}
			})
		live, _ := dynamicClient(t).Resource(deploymentsGVR).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
		out, _ := json.Marshal(live.Object["spec"])
		if !strings.Contains(string(out), "CTRL") {
			t.Errorf("exit %d: the controller's env lost\n%s", r.code, r.stderr)
		}
	})
	t.Run("service port targetPort changes while controller adds a port", func(t *testing.T) {
		ns := cluster.Namespace(t)
		r := reviewPlanThenRun(t, ns, "s.yaml",
			reviewService("[{name: a, port: 80, targetPort: 8080}]"),
			reviewService("[{name: a, port: 80, targetPort: 9090}]"), func() {
				patch := `[{"op":"add","path":"/spec/ports/-","value":{"name":"ctrl","port":99}}]`
				if _, err := dynamicClient(t).Resource(reviewServices).Namespace(ns).Patch(context.Background(), "s", types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "controller"}); err != nil {
					t.Fatal(err)
				}
			})
		live, _ := dynamicClient(t).Resource(reviewServices).Namespace(ns).Get(context.Background(), "s", metav1.GetOptions{})
		out, _ := json.Marshal(live.Object["spec"])
		if !strings.Contains(string(out), "ctrl") {
			t.Errorf("exit %d: the controller's port lost\n%s", r.code, r.stderr)
		}
	})
}
