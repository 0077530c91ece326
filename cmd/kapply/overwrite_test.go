package main

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestOverwriteFalseRefusesConflicts: with --overwrite=false, an object
// whose patch would change a field someone else changed since the last
// apply is refused, naming the field (never its value); the others are
// applied; exit 1. kubectl refuses the conflicting object too, with
// apimachinery's "conflicts with changes made from original to current" —
// and also the other one, since it counts its own last-applied annotation
// as changed by someone else (every patch changes it).
func TestOverwriteFalseRefusesConflicts(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	cm := func(name, a, b string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: \"" + a + "\", b: \"" + b + "\"}\n---\n"
	}
	dir := writeFiles(t, map[string]string{"cms.yaml": cm("taken", "1", "1") + cm("free", "1", "1")})
	mustApply(t, dir, ns, "configmap/taken created\nconfigmap/free created\n")
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	if _, err := cms.Patch(context.Background(), "taken", types.MergePatchType, []byte(`{"data":{"a":"other writer"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cms.yaml", cm("taken", "2", "2")+cm("free", "2", "2"))

	for _, dryRun := range []string{"--dry-run=client", "--dry-run=server", "--dry-run=none"} {
		r := kapply(t, "apply", "-f", dir, "-n", ns, "--overwrite=false", dryRun)
		want := []string{"configmap/taken", "conflicts with changes made from original to current", "data.a changed since the last apply"}
		if r.code != exitFailed || !errorLineHasAll(r.stderr, want) || strings.Contains(r.stderr, "other writer") || !strings.Contains(r.stdout, "configmap/free configured") {
			t.Errorf("%s: exit %d, want 1, free configured and an error line with %q (no value):\nstdout:\n%s\nstderr:\n%s", dryRun, r.code, want, r.stdout, r.stderr)
		}
	}
	assertData(t, cms, "taken", map[string]any{"a": "other writer", "b": "1"})
	assertData(t, cms, "free", map[string]any{"a": "2", "b": "2"})

	k := kubectlRun(t, "", "apply", "-f", dir, "-n", ns, "--overwrite=false")
	if k.code != 1 || !strings.Contains(k.stderr, "conflicts with changes made from original to current") {
		t.Errorf("kubectl: exit %d\n%s", k.code, k.stderr)
	}
	assertData(t, cms, "taken", map[string]any{"a": "other writer", "b": "1"})

	mustApply(t, dir, ns, "configmap/taken configured\nconfigmap/free unchanged\n")
	assertData(t, cms, "taken", map[string]any{"a": "2", "b": "2"})
}

// TestOverwriteFalseTakesAStringDataChange: a Secret applied with
// stringData, whose value then changes in the file with no other writer,
// is applied under --overwrite=false (exit 0): the server folds stringData
// into data and keeps none, so the record's stringData.KEY is compared
// with the live data.KEY decoded — with a redacted record and a plain one.
// When another writer then changes data.KEY, the next change is refused,
// naming stringData.KEY and no value.
func TestOverwriteFalseTakesAStringDataChange(t *testing.T) {
	testcluster.Require(t, cluster)
	for _, record := range []string{"redacted", "plain"} {
		t.Run(record, func(t *testing.T) {
			ns := cluster.Namespace(t)
			secret := func(value string) string {
				return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {token: " + value + ", user: admin}\n"
			}
			dir := writeFiles(t, map[string]string{"s.yaml": secret("first-value")})
			apply := []string{"apply", "-f", dir, "-n", ns, "--secret-record=" + record, "--overwrite=false"}
			if r := kapply(t, apply...); r.code != 0 || r.stdout != "secret/creds created\n" {
				t.Fatalf("create: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			writeFile(t, dir, "s.yaml", secret("second-value"))
			if r := kapply(t, apply...); r.code != 0 || r.stdout != "secret/creds configured\n" {
				t.Fatalf("stringData changed, no other writer: exit %d, want 0 and configured\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			assertData(t, dynClient(t).Resource(secrets).Namespace(ns), "creds", map[string]any{
				"token": base64.StdEncoding.EncodeToString([]byte("second-value")), "user": base64.StdEncoding.EncodeToString([]byte("admin"))})

			other := base64.StdEncoding.EncodeToString([]byte("other-writer"))
			if _, err := dynClient(t).Resource(secrets).Namespace(ns).Patch(context.Background(), "creds", types.MergePatchType,
				[]byte(`{"data":{"token":"`+other+`"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "s.yaml", secret("third-value"))
			r := kapply(t, apply...)
			want := []string{"secret/creds", "stringData.token changed since the last apply"}
			if r.code != exitFailed || !errorLineHasAll(r.stderr, want) || strings.Contains(r.stderr+r.stdout, "other-writer") || strings.Contains(r.stderr+r.stdout, "third-value") {
				t.Errorf("after another writer: exit %d, want 1 and an error line with %q (no value)\n%s\n%s", r.code, want, r.stdout, r.stderr)
			}
		})
	}
}
