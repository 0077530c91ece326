package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	smdpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
)

var specReplicas = smdpath.MakePathOrDie("spec", "replicas")

// clientSideOwnsReplicas reports whether kubectl-client-side-apply's Update
// entry of the Deployment owns spec.replicas.
func clientSideOwnsReplicas(t *testing.T, ns, name string) bool {
	t.Helper()
	set, err := ownership.EntrySet(liveObject(t, deployments, ns, name).GetManagedFields(), apply.ClientSideFieldManager, metav1.ManagedFieldsOperationUpdate)
	if err != nil {
		t.Fatal(err)
	}
	return set.Has(specReplicas)
}

// releasedThenServerSide is issue 30's sequence up to the server-side
// step: apply with replicas 3, release spec.replicas, drop it from the
// file. It returns the file without replicas.
func releasedThenServerSide(t *testing.T, ns, name string) string {
	t.Helper()
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"d.yaml": ownedDeployment(name, "3")}), "-n", ns)
	without := writeFiles(t, map[string]string{"d.yaml": ownedDeployment(name, "")})
	mustRun(t, "release", "-f", without, "-n", ns, "--field", "spec.replicas")
	assertRecordHas(t, ns, name, false)
	if clientSideOwnsReplicas(t, ns, name) {
		t.Errorf("%s: after release, kubectl-client-side-apply still owns spec.replicas in managedFields", name)
	}
	return without
}

func assertReplicas(t *testing.T, ns, name string, want int64, after string) {
	t.Helper()
	if got := liveReplicas(t, ns, name); got != want {
		t.Errorf("%s: replicas %d after %s, want %d (released)", name, got, after, want)
	}
}

// TestReleaseThenMigrateKeepsReplicas: apply (replicas 3), release
// spec.replicas, drop it from the file, migrate --to=server-side, apply
// --server-side: replicas stay 3. release used to edit only the record,
// and the migration handed kubectl-client-side-apply's replicas to
// kubectl, whose next apply deleted them (the Deployment dropped to 1).
func TestReleaseThenMigrateKeepsReplicas(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	without := releasedThenServerSide(t, ns, "web")
	mustRun(t, "migrate", "--to=server-side", "-f", without, "-n", ns)
	assertReplicas(t, ns, "web", 3, "migrate")
	mustRun(t, "apply", "--server-side", "-f", without, "-n", ns)
	assertReplicas(t, ns, "web", 3, "migrate and apply --server-side")
}

// TestReleaseThenServerSideApplyKeepsReplicas is the same with apply
// --server-side straight after release: its CSA→SSA upgrade must not
// hand the released replicas to kubectl, and diff --server-side (the
// server's dry run, and computed locally) shows no change to them.
func TestReleaseThenServerSideApplyKeepsReplicas(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	without := releasedThenServerSide(t, ns, "web")
	assertNoReplicasDiff(t, without, ns)
	mustRun(t, "apply", "--server-side", "-f", without, "-n", ns)
	assertReplicas(t, ns, "web", 3, "apply --server-side")
	mustRun(t, "apply", "--server-side", "-f", without, "-n", ns)
	assertReplicas(t, ns, "web", 3, "a second apply --server-side")
}

// assertNoReplicasDiff: diff --server-side, by the server's dry run and
// computed locally (which upgrades client-side ownership as apply does),
// shows the replicas unchanged.
func assertNoReplicasDiff(t *testing.T, dir, ns string) {
	t.Helper()
	for _, args := range [][]string{{"diff", "--server-side"}, {"diff", "--local", "--server-side"}} {
		if d := kapply(t, append(args, "-f", dir, "-n", ns)...); strings.Contains(d.stdout, "replicas") || d.code > 1 {
			t.Errorf("%v: exit %d, shows replicas changing:\n%s%s", args, d.code, d.stdout, d.stderr)
		}
	}
}

// TestOlderReleaseKeepsReplicasOnServerSide: an object released by an
// older kapply has the record without spec.replicas while
// kubectl-client-side-apply still owns them in managedFields. migrate
// --to=server-side, and the upgrade inside apply --server-side, hand over
// only what the record names: replicas stay 3, owned by no one.
func TestOlderReleaseKeepsReplicasOnServerSide(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	names := []string{"migrated", "applied"}
	for _, name := range names {
		mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"d.yaml": ownedDeployment(name, "3")}), "-n", ns)
		releaseRecordOnly(t, ns, name)
	}
	migrated := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("migrated", "")})
	applied := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("applied", "")})

	m := mustRun(t, "migrate", "--to=server-side", "-f", migrated, "-n", ns)
	if !strings.Contains(m.stdout, "not in the record, left to no manager by kubectl-client-side-apply: ") {
		t.Errorf("migrate does not say what it leaves to no manager:\n%s", m.stdout)
	}
	if clientSideOwnsReplicas(t, ns, "migrated") {
		t.Errorf("after migrate, kubectl-client-side-apply still owns spec.replicas")
	}
	assertNoReplicasDiff(t, applied, ns)
	for _, dir := range []string{migrated, applied} {
		mustRun(t, "apply", "--server-side", "-f", dir, "-n", ns)
	}
	for _, name := range names {
		assertReplicas(t, ns, name, 3, "apply --server-side")
		set, err := ownership.EntrySet(liveObject(t, deployments, ns, name).GetManagedFields(), apply.ServerSideFieldManager, metav1.ManagedFieldsOperationApply)
		if err != nil {
			t.Fatal(err)
		}
		if set.Has(specReplicas) || set.Empty() {
			t.Errorf("%s: kubectl owns %v; want the file's fields, not spec.replicas", name, set)
		}
	}
}

// releaseRecordOnly drops spec.replicas from the Deployment's record and
// changes nothing else, as kapply release did before it edited
// managedFields (under kubectl-client-side-apply, its default manager).
func releaseRecordOnly(t *testing.T, ns, name string) {
	t.Helper()
	live := liveObject(t, deployments, ns, name)
	record, err := lastapplied.Read(live)
	if err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(record, "spec", "replicas")
	encoded, err := json.Marshal(record)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{lastapplied.Annotation: string(encoded)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: apply.ClientSideFieldManager}); err != nil {
		t.Fatal(err)
	}
	assertRecordHas(t, ns, name, false)
	if !clientSideOwnsReplicas(t, ns, name) {
		t.Fatalf("%s: the record-only release took spec.replicas from kubectl-client-side-apply; the test no longer simulates an older release", name)
	}
}
