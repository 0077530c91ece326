package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// Known Secret values: none may appear in any output, plain or base64.
const (
	filePassword  = "file-pass-7d1e"
	livePassword  = "live-pass-93ab"
	fileToken     = "file-token-5c20"
	writerToken   = "writer-token-e841"
	plainPassword = "plain-pass-0f6a"
)

var knownSecretValues = []string{filePassword, livePassword, fileToken, writerToken, plainPassword,
	b64(filePassword), b64(livePassword), b64(fileToken), b64(writerToken), b64(plainPassword)}

// assertNoSecret fails when a run printed a known Secret value.
func assertNoSecret(t *testing.T, what string, r result) {
	t.Helper()
	assertAbsent(t, what+" stdout", r.stdout, knownSecretValues)
	assertAbsent(t, what+" stderr", r.stderr, knownSecretValues)
}

// TestAdoptMasksSecretValues: adopt (and its dry runs) lists what the next
// apply changes in a Secret with masks, never the values.
func TestAdoptMasksSecretValues(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	kubectl(t, "create", "secret", "generic", "creds", "--from-literal=password="+livePassword, "-n", ns)
	dir := writeFiles(t, map[string]string{"secret.yaml": fmt.Sprintf(
		"apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: %s}\nstringData: {extra: %s}\n", b64(filePassword), plainPassword)})
	for _, dryRun := range []string{"--dry-run=client", "--dry-run=server", "--dry-run=none"} {
		r := kapply(t, "adopt", "-f", dir, "-n", ns, dryRun)
		if r.code != 0 || !strings.Contains(r.stdout, "data.password: *** (before) -> *** (after) (set by file)") ||
			!strings.Contains(r.stdout, "stringData.extra: (none) -> *** (set by file)") {
			t.Errorf("adopt %s: exit %d\nstdout:\n%s\nstderr:\n%s", dryRun, r.code, r.stdout, r.stderr)
		}
		assertNoSecret(t, "adopt "+dryRun, r)
	}
}

// TestStatusMasksSecretValuesAndFoldsStringData: a Secret applied with
// stringData is in step (the server folds stringData into data: no
// permanent drift), exit 0; once another writer changes a value, status
// reports it masked, in text and JSON, and exits 1.
func TestStatusMasksSecretValuesAndFoldsStringData(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"secret.yaml": fmt.Sprintf(
		"apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {token: %s}\nstringData: {password: %s}\n", b64(fileToken), plainPassword)})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	for _, output := range []string{"", "json"} {
		r := kapply(t, "status", "-f", dir, "-n", ns, "-o", output)
		if r.code != 0 || strings.Contains(r.stdout, "stringData") {
			t.Errorf("status -o %q right after apply: exit %d, want 0 and no stringData drift\n%s\n%s", output, r.code, r.stdout, r.stderr)
		}
		assertNoSecret(t, "status -o "+output, r)
	}

	patch := fmt.Sprintf(`{"data": {"token": %q}}`, b64(writerToken))
	if _, err := dynClient(t).Resource(secrets).Namespace(ns).Patch(context.Background(), "creds", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "other-writer"}); err != nil {
		t.Fatal(err)
	}
	text := kapply(t, "status", "-f", dir, "-n", ns)
	if text.code != exitDrift || !strings.Contains(text.stdout, `data.token: last applied "*** (before)", live "*** (after)" (owned by`) ||
		strings.Contains(text.stdout, "stringData") {
		t.Errorf("status after another writer: exit %d, want %d\n%s\n%s", text.code, exitDrift, text.stdout, text.stderr)
	}
	assertNoSecret(t, "status after another writer", text)
	js := kapply(t, "status", "-f", dir, "-n", ns, "-o", "json")
	var statuses []struct {
		Changed []struct {
			Path              string
			LastApplied, Live any
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &statuses); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, js.stdout)
	}
	if js.code != exitDrift || len(statuses) != 1 || len(statuses[0].Changed) != 1 || statuses[0].Changed[0].Path != "data.token" ||
		statuses[0].Changed[0].Live != "*** (after)" {
		t.Errorf("status -o json after another writer: exit %d\n%s", js.code, js.stdout)
	}
	assertNoSecret(t, "status -o json after another writer", js)
}

// TestDiffShowManagedMasksTheSecretsRecord: --show-managed shows the
// last-applied annotations, which hold a Secret's values; without
// --show-secrets they are masked too, in the diff and in --explain.
func TestDiffShowManagedMasksTheSecretsRecord(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {token: %s}\nstringData: {password: %s}\n"
	dir := writeFiles(t, map[string]string{"secret.yaml": fmt.Sprintf(secret, b64(fileToken), plainPassword)})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "secret.yaml", fmt.Sprintf(secret, b64(writerToken), filePassword))
	for _, extra := range [][]string{nil, {"--explain"}, {"--local"}, {"--local", "--explain"}} {
		r := kapply(t, append([]string{"diff", "-f", dir, "-n", ns, "--show-managed"}, extra...)...)
		if r.code != exitDifferences || !strings.Contains(r.stdout, "last-applied-configuration") {
			t.Errorf("diff --show-managed %v: exit %d\n%s\n%s", extra, r.code, r.stdout, r.stderr)
		}
		assertNoSecret(t, fmt.Sprint("diff --show-managed ", extra), r)
	}
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--show-managed", "--show-secrets")
	if !strings.Contains(r.stdout, b64(writerToken)) {
		t.Errorf("--show-secrets hides the new token:\n%s", r.stdout)
	}
}
