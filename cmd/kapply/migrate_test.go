package main

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/testcluster"
)

const migrateDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10.1
`

// TestMigrateToServerSidePredictsConflicts: a Deployment made by kubectl
// create, then kubectl apply (client-side), then kubectl scale (manager
// "kubectl", subresource scale). migrate --to=server-side shows, in a dry
// run, that kubectl scale owns
// .spec.replicas with another value, and refuses without --force-conflicts
// (nothing changed); with it, kubectl owns the replicas and the record's
// fields kubectl-create held, so kubectl apply --server-side of a file
// without the tier label removes the label, with no conflict, and sets the
// file's replicas.
func TestMigrateToServerSidePredictsConflicts(t *testing.T) {
	testcluster.Require(t, cluster)
	kubectl := testcluster.Kubectl137(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": migrateDeployment})
	for _, args := range [][]string{{"create", "-f", dir}, {"apply", "-f", dir}, {"scale", "deployment/web", "--replicas=5"}} {
		if r := runKubectl137(t, kubectl, append(args, "-n", ns)...); r.code != 0 {
			t.Fatalf("kubectl %v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	before := liveObject(t, deployments, ns, "web")

	r := kapply(t, "migrate", "--to=server-side", "--dry-run=server", "-f", dir, "-n", ns)
	if r.code != exitFailed || !strings.Contains(r.stderr, `conflict with "kubectl (scale)": .spec.replicas`) {
		t.Errorf("dry run: exit %d, want %d and the conflict\n%s\n%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	if r := kapply(t, "migrate", "--to=server-side", "-f", dir, "-n", ns); r.code != exitFailed || !strings.Contains(r.stderr, "--force-conflicts") {
		t.Errorf("without --force-conflicts: exit %d, want %d\n%s", r.code, exitFailed, r.stderr)
	}
	if after := liveObject(t, deployments, ns, "web"); after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("refused migration wrote the object (resourceVersion %s -> %s)", before.GetResourceVersion(), after.GetResourceVersion())
	}

	r = kapply(t, "migrate", "--to=server-side", "--force-conflicts", "--dry-run=client", "-f", dir, "-n", ns)
	t.Logf("the plan:\n%s", r.stdout)
	for _, want := range []string{"deployment.apps/web migrated (dry run)\n", "  to kubectl from kubectl-create: ", ".metadata.labels.tier",
		"  taken from kubectl (scale) (--force-conflicts): .spec.replicas\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("dry run with --force-conflicts: exit %d, want %q in\n%s\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if r := kapply(t, "migrate", "--to=server-side", "--force-conflicts", "-f", dir, "-n", ns); r.code != 0 || !strings.HasPrefix(r.stdout, "deployment.apps/web migrated\n") {
		t.Fatalf("migrate --force-conflicts: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	live := liveObject(t, deployments, ns, "web")
	if replicas, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); replicas != 5 {
		t.Errorf("replicas %d after migrate, want 5: migrate changes no value", replicas)
	}
	if _, has := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; !has {
		t.Error("the last-applied record is gone; kept by default")
	}
	for _, e := range live.GetManagedFields() {
		if e.Manager == "kubectl-client-side-apply" || e.Subresource == "scale" {
			t.Errorf("%s still owns fields after migrate: %s", e.Manager, e.FieldsV1.Raw)
		}
		if e.Manager == "kubectl-create" && strings.Contains(string(e.FieldsV1.Raw), "tier") {
			t.Errorf("kubectl-create still owns the record's label: %s", e.FieldsV1.Raw)
		}
	}

	writeFile(t, dir, "web.yaml", strings.Replace(migrateDeployment, ", tier: front", "", 1))
	r = runKubectl137(t, kubectl, "apply", "--server-side", "-f", filepath.Join(dir, "web.yaml"), "-n", ns)
	if r.code != 0 || strings.Contains(r.stderr, "conflict") {
		t.Fatalf("kubectl apply --server-side after migrate: exit %d\n%s", r.code, r.stderr)
	}
	live = liveObject(t, deployments, ns, "web")
	if _, has := live.GetLabels()["tier"]; has {
		t.Errorf("labels %v: the label dropped from the file survived the server-side apply", live.GetLabels())
	}
	if replicas, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); replicas != 2 {
		t.Errorf("replicas %d, want the file's 2", replicas)
	}
}

// TestMigrateSecretKeepsValuesHidden: a Secret applied by kapply has a
// redacted record; migrate both ways works from it, prints no value, and
// the record written back by --to=client-side is redacted too.
func TestMigrateSecretKeepsValuesHidden(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const value = "bWlncmF0ZS1zM2NyZXQtdmFsdWU=" // base64 of migrate-s3cret-value
	dir := writeFiles(t, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: " + value + ", token: dG9r}\n" +
		"stringData: {user: migrate-user-value}\n"})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	for _, to := range []string{"server-side", "client-side"} {
		r := kapply(t, "migrate", "--to="+to, "-f", dir, "-n", ns)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "secret/creds migrated\n") || strings.Contains(r.stdout+r.stderr, value) || strings.Contains(r.stdout+r.stderr, "migrate-user-value") || strings.Contains(r.stdout+r.stderr, "migrate-user-value") {
			t.Fatalf("migrate --to=%s: exit %d\n%s\n%s", to, r.code, r.stdout, r.stderr)
		}
	}
	live := liveObject(t, secrets, ns, "creds")
	record := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	if record == "" || strings.Contains(record, value) || strings.Contains(record, "migrate-user-value") || strings.Contains(record, "migrate-user-value") || !strings.Contains(record, "password") {
		t.Errorf("record after --to=client-side: %q; want one naming password, redacted", record)
	}
}
