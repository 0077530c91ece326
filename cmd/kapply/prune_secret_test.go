package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/internal/testcluster"
)

// randomValue is a Secret value no output can hold by chance.
func randomValue(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + "-" + hex.EncodeToString(b)
}

// valueForms are the ways an output could leak value: as it is, base64
// (padded and raw, both alphabets) and base64 of its JSON-quoted form.
func valueForms(value string) []string {
	quoted := strconv.Quote(value)
	return []string{value, b64(value), base64.RawStdEncoding.EncodeToString([]byte(value)),
		base64.URLEncoding.EncodeToString([]byte(value)), b64(quoted)}
}

// TestPrunedSecretValuesAreMasked: a Secret the files dropped, its record
// plain (kapply --secret-record=plain in an ApplySet; kubectl's, pruned by
// selector), is shown by diff --prune in every mode — unified, --local,
// --server-side, --explain, --show-managed, an external program — and by
// apply --prune (dry runs, -o yaml|json) with its values masked, never
// plain nor base64; --show-secrets shows them.
func TestPrunedSecretValuesAreMasked(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	setups := []struct {
		name       string
		prune      []string
		firstApply func(dir, ns string)
	}{
		{"applyset", []string{"--prune", "--applyset=shop"}, func(dir, ns string) {
			mustRun(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop", "--secret-record=plain")
		}},
		{"selector", []string{"--prune", "-l", "app=shop", "--prune-allowlist=core/v1/Secret,core/v1/ConfigMap"}, func(dir, ns string) {
			kubectl(t, "apply", "-f", dir, "-n", ns)
		}},
	}
	for _, setup := range setups {
		t.Run(setup.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			token, password := randomValue(t, "token"), randomValue(t, "pass")
			forbidden := append(valueForms(token), valueForms(password)...)
			dir := writeFiles(t, map[string]string{
				"secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: gone, labels: {app: shop}}\n"+
					"data: {token: %s}\nstringData: {password: %s}\n", b64(token), password),
				"keep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep, labels: {app: shop}}\ndata: {k: v}\n",
			})
			setup.firstApply(dir, ns)
			if record := liveObject(t, secrets, ns, "gone").GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; !strings.Contains(record, password) {
				t.Fatalf("the record is not plain: %s", record)
			}
			if err := os.Remove(filepath.Join(dir, "secret.yaml")); err != nil {
				t.Fatal(err)
			}
			r := kapply(t, append([]string{"diff", "-f", dir, "-n", ns, "--show-secrets"}, setup.prune...)...)
			if !strings.Contains(r.stdout, b64(token)) {
				t.Errorf("diff --prune --show-secrets shows no value:\n%s\n%s", r.stdout, r.stderr)
			}
			assertPrunedSecretMasked(t, dir, ns, setup.prune, forbidden)
			if _, err := dynClient(t).Resource(secrets).Namespace(ns).Get(t.Context(), "gone", metav1.GetOptions{}); err == nil {
				t.Errorf("the Secret was not pruned")
			}
		})
	}
}

// assertPrunedSecretMasked runs diff and apply with prune in every mode
// and checks that none printed a forbidden form; the last run prunes.
func assertPrunedSecretMasked(t *testing.T, dir, ns string, prune, forbidden []string) {
	t.Helper()
	check := func(what string, r result, wantCode int, wantMask bool) {
		t.Helper()
		assertAbsent(t, what+" stdout", r.stdout, forbidden)
		assertAbsent(t, what+" stderr", r.stderr, forbidden)
		if r.code != wantCode || !strings.Contains(r.stdout, "gone") || wantMask && !strings.Contains(r.stdout, "***") {
			t.Errorf("%s: exit %d, want %d and the masked Secret\nstdout:\n%s\nstderr:\n%s", what, r.code, wantCode, r.stdout, r.stderr)
		}
	}
	diffModes := [][]string{nil, {"--local"}, {"--server-side"}, {"--explain"}, {"--local", "--explain"},
		{"--show-managed"}, {"--show-managed", "--explain"}, {"--local", "--show-managed"}, {"--server-side", "--show-managed"}}
	for _, mode := range diffModes {
		r := kapply(t, append(append([]string{"diff", "-f", dir, "-n", ns}, prune...), mode...)...)
		check(fmt.Sprint("diff --prune ", mode), r, exitDifferences, true)
		if slices.Contains(mode, "--explain") && !strings.Contains(r.stdout, "# why: pruned: no file declares it\n") {
			t.Errorf("diff --prune %v does not say why:\n%s", mode, r.stdout)
		}
	}
	r := kapply(t, append([]string{"diff", "-f", dir, "-n", ns, "--summary"}, prune...)...)
	check("diff --prune --summary", r, exitDifferences, false)
	// The external program prints every file it is given.
	t.Setenv(kapplyExternalDiff, script(t, `cat "$1"/* "$2"/*; exit 1`))
	for _, mode := range [][]string{nil, {"--show-managed"}, {"--local", "--show-managed"}} {
		r := kapply(t, append(append([]string{"diff", "-f", dir, "-n", ns}, prune...), mode...)...)
		check(fmt.Sprint("external diff --prune ", mode), r, exitDifferences, true)
	}
	t.Setenv(kapplyExternalDiff, "")
	applyModes := [][]string{{"--dry-run=client"}, {"--dry-run=server"}, {"--dry-run=client", "-o", "yaml"},
		{"--dry-run=server", "-o", "json"}, {"--server-side", "--dry-run=server", "-o", "yaml"}, {"-o", "yaml"}}
	for _, mode := range applyModes {
		r := kapply(t, append(append([]string{"apply", "-f", dir, "-n", ns}, prune...), mode...)...)
		check(fmt.Sprint("apply --prune ", mode), r, 0, strings.Contains(strings.Join(mode, " "), "-o"))
	}
}
