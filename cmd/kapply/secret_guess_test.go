package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// The PINs of the guessing test: six digits, the kind of value a
// dictionary of a million guesses covers.
const (
	guessPIN     = "482913"
	guessNextPIN = "730146"
	kubectlPIN   = "159372"
)

func pinSecret(name, pin string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\ntype: Opaque\nstringData: {pin: %q}\n", name, pin)
}

// guesser is someone who holds a plan file or a record, and not the
// cluster's Secrets: every digest a document gives, it tests each
// six-digit PIN against, with what the document holds beside it (a salt,
// a UID) and what it can know of the rest (the files, kubectl's record
// of them).
type guesser struct {
	// records are the last-applied texts a LastApplied digest may cover,
	// with the PIN in them, by UID: the rest of the text is the files'.
	records map[string]string
}

var (
	// kapply:sha256:SALT:SUM, the unkeyed value digest of kapply before
	// keyed digests.
	unkeyedValueDigest = regexp.MustCompile(`kapply:sha256:([A-Za-z0-9_-]{16}):([0-9a-f]{32})`)
	// sha256:SUM, a plan item's unkeyed digest of the records.
	unkeyedRecordDigest = regexp.MustCompile(`^sha256:([0-9a-f]{64})$`)
)

// recover returns the PINs the documents give away, and how long the
// search took.
func (g guesser) recover(t *testing.T, docs map[string][]byte) ([]string, time.Duration) {
	t.Helper()
	start := time.Now()
	var found []string
	for name, doc := range docs {
		for _, m := range unkeyedValueDigest.FindAllSubmatch(doc, -1) {
			salt, err := base64.RawURLEncoding.DecodeString(string(m[1]))
			if err != nil {
				continue
			}
			if pin, ok := searchPINs(func(pin string) bool {
				h := sha256.New()
				h.Write(salt)
				h.Write([]byte("pin\x00" + pin))
				return hex.EncodeToString(h.Sum(nil)[:16]) == string(m[2])
			}); ok {
				found = append(found, name+": value digest gives "+pin)
			}
		}
		found = append(found, g.recoverFromPlanItems(name, doc)...)
	}
	return found, time.Since(start)
}

// recoverFromPlanItems tests each plan item's record digest (lastApplied)
// as kapply computed it before keyed digests: SHA-256 of the UID and the
// record annotations.
func (g guesser) recoverFromPlanItems(name string, doc []byte) []string {
	var plan struct {
		Items []struct {
			UID         string `json:"uid"`
			LastApplied string `json:"lastApplied"`
		} `json:"items"`
	}
	if json.Unmarshal(doc, &plan) != nil {
		return nil
	}
	var found []string
	for _, it := range plan.Items {
		m := unkeyedRecordDigest.FindStringSubmatch(it.LastApplied)
		record, ok := g.records[it.UID]
		if m == nil || !ok {
			continue
		}
		if pin, ok := searchPINs(func(pin string) bool {
			text := strings.ReplaceAll(record, "{{PIN}}", pin)
			h := sha256.New()
			h.Write([]byte(it.UID))
			fmt.Fprintf(h, "\x00%s\x00%t\x00%d\x00%s", "kubectl.kubernetes.io/last-applied-configuration", true, len(text), text)
			fmt.Fprintf(h, "\x00%s\x00%t\x00%d\x00%s", "kapply.dev/last-applied-compact", false, 0, "")
			return hex.EncodeToString(h.Sum(nil)) == m[1]
		}); ok {
			found = append(found, name+": lastApplied of uid "+it.UID+" gives "+pin)
		}
	}
	return found
}

// searchPINs tries every six-digit PIN.
func searchPINs(matches func(pin string) bool) (string, bool) {
	for i := range 1000000 {
		if pin := fmt.Sprintf("%06d", i); matches(pin) {
			return pin, true
		}
	}
	return "", false
}

// TestSecretDigestsGiveNoGuessOffline: whoever holds only a Secret's
// record (a backup, an audit log) or only a saved plan (a CI artifact)
// cannot test a guessed value: every digest of a value is keyed by the
// namespace's key, which lives in the cluster (in a Secret of the
// namespace) and not in the file; a plan item's digest of a record that
// holds values (kubectl's) too. The plan still verifies and runs on the
// cluster, and a record written by an older kapply (unkeyed digests)
// still counts as in step and is replaced by keyed digests.
func TestSecretDigestsGiveNoGuessOffline(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"pin.yaml": pinSecret("pin", guessPIN)})
	mustApply(t, dir, ns, "secret/pin created\n")
	// A Secret kubectl applied: its record holds the PIN as written.
	kdir := writeFiles(t, map[string]string{"kpin.yaml": pinSecret("kpin", kubectlPIN)})
	if r := kapply(t, "apply", "-f", kdir, "-n", ns, "--secret-record=plain"); r.code != 0 {
		t.Fatalf("applying kpin as kubectl records it: exit %d\n%s", r.code, r.stderr)
	}
	kpin := liveObject(t, secrets, ns, "kpin")
	record := kpin.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	if !strings.Contains(record, kubectlPIN) {
		t.Fatalf("kpin's record is not kubectl's plain record:\n%s", record)
	}

	writeFile(t, dir, "pin.yaml", pinSecret("pin", guessNextPIN))
	writeFile(t, dir, "kpin.yaml", pinSecret("kpin", guessNextPIN))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile); r.code != 0 && r.code != 1 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	planDoc, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{
		"the plan file":  planDoc,
		"pin's record":   []byte(liveObject(t, secrets, ns, "pin").GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]),
		"the audit line": []byte(fmt.Sprintf("%v", liveObject(t, secrets, ns, "pin").GetAnnotations())),
	}
	g := guesser{records: map[string]string{string(kpin.GetUID()): strings.ReplaceAll(record, kubectlPIN, "{{PIN}}")}}
	found, took := g.recover(t, docs)
	if len(found) > 0 {
		t.Errorf("an offline guesser without the cluster's Secrets recovered, in %v:\n%s", took, strings.Join(found, "\n"))
	}
	if !bytes.Contains(planDoc, []byte("kapply:hmac:")) || !strings.Contains(string(docs["pin's record"]), "kapply:hmac:") {
		t.Errorf("no keyed digest in the plan or the record:\n%s\n%s", planDoc, docs["pin's record"])
	}
	keySecret, err := dynamicClient(t).Resource(secrets).Namespace(ns).Get(context.Background(), "kapply-digest-key", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the namespace's digest key: %v", err)
	}
	key, _ := keySecret.Object["data"].(map[string]any)["key"].(string)
	for name, doc := range docs {
		if key == "" || bytes.Contains(doc, []byte(key)) {
			t.Errorf("%s holds the digest key %q", name, key)
		}
	}

	// The plan verifies against the cluster, and runs.
	if r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply --plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := liveSecretData(t, ns, "pin"); got != "pin="+guessNextPIN {
		t.Errorf("after apply --plan: pin data %s", got)
	}
	assertOlderRecordStillWorks(t, ns, dir)
}

// assertOlderRecordStillWorks writes pin's record as kapply wrote it
// before keyed digests: status is in step with it, and the next apply
// replaces its digest by a keyed one.
func assertOlderRecordStillWorks(t *testing.T, ns, dir string) {
	t.Helper()
	salt := []byte("older-salt!!")
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte("pin\x00" + guessNextPIN))
	old := "kapply:sha256:" + base64.RawURLEncoding.EncodeToString(salt) + ":" + hex.EncodeToString(h.Sum(nil)[:16])
	older := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"pin","namespace":%q},"stringData":{"pin":%q},"type":"Opaque"}`+"\n", ns, old)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": older}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamicClient(t).Resource(secrets).Namespace(ns).Patch(context.Background(), "pin", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pinOnly := filepath.Join(dir, "pin.yaml")
	if r := kapply(t, "status", "-f", pinOnly, "-n", ns); r.code != 0 {
		t.Errorf("status with an older record: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, "apply", "-f", pinOnly, "-n", ns); r.code != 0 {
		t.Fatalf("apply over an older record: exit %d\n%s", r.code, r.stderr)
	}
	now := liveObject(t, secrets, ns, "pin").GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	if strings.Contains(now, "kapply:sha256:") || !strings.Contains(now, "kapply:hmac:") {
		t.Errorf("the older record was not replaced by keyed digests:\n%s", now)
	}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// TestSavedPlanOfASecretInANewNamespace: a plan made before the Secret's
// namespace exists has no stored key to make its digests under; executing
// it creates the namespace and refuses the Secret, naming the key and what
// to do; the plan made again then runs.
func TestSavedPlanOfASecretInANewNamespace(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t) + "-new"
	t.Cleanup(func() {
		_ = dynamicClient(t).Resource(namespacesGVR).Delete(context.Background(), ns, metav1.DeleteOptions{}) //nolint:errcheck // best effort
	})
	dir := writeFiles(t, map[string]string{"all.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns) + pinSecret("pin", guessPIN)})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile); r.code != 0 && r.code != 1 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if r.code == 0 || !strings.Contains(r.stderr, "run kapply plan again") || !strings.Contains(r.stderr, "kapply-digest-key") {
		t.Fatalf("apply --plan of a plan made before the namespace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertAbsent(t, "the refusal", r.stdout+r.stderr, []string{guessPIN, b64(guessPIN)})
	if r := kapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile); r.code != 0 && r.code != 1 {
		t.Fatalf("plan again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply --plan made again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := liveSecretData(t, ns, "pin"); got != "pin="+guessPIN {
		t.Errorf("pin data %s", got)
	}
}
