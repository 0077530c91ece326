package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// Values of the Secret the record tests apply: none may be in its
// redacted record, nor in any output.
const (
	recordAlpha = "rec-alpha-4c1d"
	recordBeta  = "rec-beta-90ee"
	recordGamma = "rec-gamma-2b7f"
)

var recordValues = []string{recordAlpha, recordBeta, recordGamma, b64(recordAlpha), b64(recordBeta), b64(recordGamma)}

// turnsSecret is the Secret "turns" with the given data keys (alpha, beta)
// and always stringData gamma.
func turnsSecret(keys ...string) string {
	values := map[string]string{"alpha": recordAlpha, "beta": recordBeta}
	var data []string
	for _, k := range keys {
		data = append(data, fmt.Sprintf("%s: %s", k, b64(values[k])))
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: turns}\ntype: Opaque\ndata: {%s}\nstringData: {gamma: %s}\n",
		strings.Join(data, ", "), recordGamma)
}

// liveSecretData is the live Secret's data, decoded, as "key=value" sorted.
func liveSecretData(t *testing.T, ns, name string) string {
	t.Helper()
	data, _ := liveObject(t, secrets, ns, name).Object["data"].(map[string]any)
	var out []string
	for k, v := range data {
		decoded, err := base64.StdEncoding.DecodeString(v.(string))
		if err != nil {
			t.Fatalf("data.%s: %v", k, err)
		}
		out = append(out, k+"="+string(decoded))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// assertRedactedRecord checks that the Secret's record holds no value and
// that its keys are wantData under data and gamma under stringData, each
// redacted.
func assertRedactedRecord(t *testing.T, when, ns, name string, wantData ...string) {
	t.Helper()
	live := liveObject(t, secrets, ns, name)
	raw := live.GetAnnotations()[lastapplied.Annotation]
	assertAbsent(t, when+": the record", raw, recordValues)
	record, err := lastapplied.Read(live)
	if err != nil || record == nil {
		t.Fatalf("%s: reading the record: %v", when, err)
	}
	var keys []string
	for _, field := range []string{"data", "stringData"} {
		values, _ := record[field].(map[string]any)
		for k, v := range values {
			keys = append(keys, field+"."+k)
			if !lastapplied.IsRedacted(v) {
				t.Errorf("%s: %s.%s is recorded as %v, not redacted", when, field, k, v)
			}
		}
	}
	sort.Strings(keys)
	var want []string
	for _, k := range wantData {
		want = append(want, "data."+k)
	}
	want = append(want, "stringData.gamma")
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("%s: record keys %v, want %v\n%s", when, keys, want, raw)
	}
}

// TestSecretRecordRedactedAndTakingTurnsWithKubectl: kapply records a
// Secret's keys with each value a digest; re-applying is unchanged; status
// is in step; kubectl view-last-applied shows digests. kubectl apply of the
// same file after kapply, and kapply after kubectl, give the file's values;
// a key dropped from the file is deleted by either tool from the other's
// record (kubectl's plain one, kapply's redacted one). A value changed by
// another writer is drift.
func TestSecretRecordRedactedAndTakingTurnsWithKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"secret.yaml": turnsSecret("alpha", "beta")})
	both := fmt.Sprintf("alpha=%s,beta=%s,gamma=%s", recordAlpha, recordBeta, recordGamma)

	mustApply(t, dir, ns, "secret/turns created\n")
	assertRedactedRecord(t, "kapply create", ns, "turns", "alpha", "beta")
	mustApply(t, dir, ns, "secret/turns unchanged\n")
	view := kubectl(t, "apply", "view-last-applied", "secret/turns", "-n", ns)
	if !strings.Contains(view, "kapply:hmac:") {
		t.Errorf("kubectl view-last-applied shows no digest:\n%s", view)
	}
	assertAbsent(t, "kubectl view-last-applied", view, recordValues)
	if r := kapply(t, "status", "-f", dir, "-n", ns); r.code != 0 {
		t.Errorf("status after apply: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}

	kubectl(t, "apply", "-f", dir, "-n", ns)
	if got := liveSecretData(t, ns, "turns"); got != both {
		t.Errorf("kubectl apply after kapply: data %s, want %s", got, both)
	}
	// kapply after kubectl (whose record is plain) drops beta.
	writeFile(t, dir, "secret.yaml", turnsSecret("alpha"))
	mustApply(t, dir, ns, "secret/turns configured\n")
	if got, want := liveSecretData(t, ns, "turns"), fmt.Sprintf("alpha=%s,gamma=%s", recordAlpha, recordGamma); got != want {
		t.Errorf("kapply after kubectl, beta dropped: data %s, want %s", got, want)
	}
	assertRedactedRecord(t, "kapply after kubectl", ns, "turns", "alpha")
	// kubectl after kapply (whose record is redacted) drops alpha.
	writeFile(t, dir, "secret.yaml", turnsSecret())
	kubectl(t, "apply", "-f", dir, "-n", ns)
	if got, want := liveSecretData(t, ns, "turns"), "gamma="+recordGamma; got != want {
		t.Errorf("kubectl after kapply, alpha dropped: data %s, want %s", got, want)
	}
	mustApply(t, dir, ns, "secret/turns configured\n")
	mustApply(t, dir, ns, "secret/turns unchanged\n")
	assertRedactedRecord(t, "kapply again", ns, "turns")

	patch := fmt.Sprintf(`{"data": {"gamma": %q}}`, b64("changed-by-another-writer"))
	if _, err := dynClient(t).Resource(secrets).Namespace(ns).Patch(context.Background(), "turns", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "other-writer"}); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "status", "-f", dir, "-n", ns)
	if r.code != exitDrift || !strings.Contains(r.stdout, "stringData.gamma") {
		t.Errorf("status after another writer: exit %d, want %d and stringData.gamma\n%s%s", r.code, exitDrift, r.stdout, r.stderr)
	}
	assertAbsent(t, "status stdout", r.stdout, append(recordValues, "changed-by-another-writer"))
}

// TestSecretRecordPlainIsKubectls: --secret-record=plain records the
// values as kubectl does, byte for byte; a bad value is refused (exit 1,
// as kubectl exits on any error of apply) before anything is applied.
func TestSecretRecordPlainIsKubectls(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"secret.yaml": turnsSecret("alpha", "beta")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--secret-record=clear"); r.code != exitFailed || !strings.Contains(r.stderr, `--secret-record: the Secret record must be "redacted" or "plain", not "clear"`) {
		t.Errorf("--secret-record=clear: exit %d\n%s", r.code, r.stderr)
	}
	mustRun(t, "apply", "-f", dir, "-n", ns, "--secret-record=plain")
	ours := liveObject(t, secrets, ns, "turns").GetAnnotations()[lastapplied.Annotation]
	if !strings.Contains(ours, b64(recordAlpha)) {
		t.Errorf("plain record lacks the value:\n%s", ours)
	}
	kubectl(t, "apply", "-f", dir, "-n", ns)
	if theirs := liveObject(t, secrets, ns, "turns").GetAnnotations()[lastapplied.Annotation]; theirs != ours {
		t.Errorf("plain record differs from kubectl's\n kapply: %s\nkubectl: %s", ours, theirs)
	}
	if r := mustRun(t, "apply", "-f", dir, "-n", ns, "--secret-record=plain"); r.stdout != "secret/turns unchanged\n" {
		t.Errorf("plain after kubectl: %q, want unchanged", r.stdout)
	}
}

// TestSecretRecordServerSideHoldsNoValue: after server-side applies of a
// Secret that has a record — under kubectl's manager, whose apply patches
// make the API server rewrite the record from the patch (its
// lastAppliedUpdater), and under another — the record, if any, holds no
// value.
func TestSecretRecordServerSideHoldsNoValue(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"secret.yaml": turnsSecret("alpha", "beta")})
	mustApply(t, dir, ns, "secret/turns created\n")
	for _, extra := range [][]string{{"--server-side"}, {"--server-side"}, {"--server-side", "--field-manager=other", "--force-conflicts"}} {
		mustRun(t, append([]string{"apply", "-f", dir, "-n", ns}, extra...)...)
		record := liveObject(t, secrets, ns, "turns").GetAnnotations()[lastapplied.Annotation]
		assertAbsent(t, fmt.Sprint("the record after apply ", extra), record, recordValues)
	}
}

// TestLastAppliedSetAndAdoptRedactSecrets: adopt and last-applied set
// record a Secret's file redacted too (set over kubectl's plain record);
// after adopt, the next apply of the file is unchanged.
func TestLastAppliedSetAndAdoptRedactSecrets(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"secret.yaml": turnsSecret("alpha", "beta")})
	kubectl(t, "create", "secret", "generic", "turns", "-n", ns,
		"--from-literal=alpha="+recordAlpha, "--from-literal=beta="+recordBeta, "--from-literal=gamma="+recordGamma)
	assertNoRecordValue(t, "adopt", mustRun(t, "adopt", "-f", dir, "-n", ns))
	assertRedactedRecord(t, "adopt", ns, "turns", "alpha", "beta")
	mustApply(t, dir, ns, "secret/turns unchanged\n")

	kubectl(t, "apply", "-f", dir, "-n", ns)
	assertNoRecordValue(t, "last-applied set", mustRun(t, "last-applied", "set", "-f", dir, "-n", ns))
	assertRedactedRecord(t, "last-applied set", ns, "turns", "alpha", "beta")
}
