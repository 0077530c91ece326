package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// The values of the Secret the force tests replace: in the saved copy,
// never in any output.
const (
	forceOldValue = "force-old-5e2a"
	forceNewValue = "force-new-77c1"
)

var forceValues = []string{forceOldValue, forceNewValue, b64(forceOldValue), b64(forceNewValue)}

// immutableSecret is the Secret "s", immutable, holding password: value:
// a change of value is refused as invalid, so --force replaces it.
func immutableSecret(value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: s
  labels: {keep: me}
  annotations: {note: kept}
immutable: true
data: {password: %s}
`, b64(value))
}

// savedLine is the line apply prints before deleting an object for --force.
var savedLine = regexp.MustCompile(`kapply: saved secret/s -n \S+ to (\S+) before deleting it for --force\n`)

// createWebhook serves a validating admission webhook over TLS on loopback
// (the test cluster's kube-apiserver runs on loopback too) and registers it
// for CREATE of Secrets in ns. decide answers each create that is not a
// dry run; its ctx ends when the API server gives up on the call.
func createWebhook(t *testing.T, ns string, decide func(ctx context.Context, secret *corev1.Secret) error) {
	t.Helper()
	var calls atomic.Int64
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		calls.Add(1)
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("decoding the review: %v", err), http.StatusBadRequest)
			return
		}
		response := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		var secret corev1.Secret
		if review.Request.DryRun == nil || !*review.Request.DryRun {
			err := json.Unmarshal(review.Request.Object.Raw, &secret)
			if err == nil {
				err = decide(req.Context(), &secret)
			}
			if err != nil {
				response.Allowed, response.Result = false, &metav1.Status{Message: err.Error()}
			}
		}
		review.Response = response
		if err := json.NewEncoder(w).Encode(review); err != nil {
			t.Errorf("webhook: writing the answer: %v", err)
		}
	}))
	t.Cleanup(server.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	createClusterObject(t, validatingWebhooks, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: force-%[1]s}
webhooks:
- name: force.kapply.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 30
  clientConfig: {url: %[2]q, caBundle: %[3]s}
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: %[1]s}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}
`, ns, server.URL+"/validate", base64.StdEncoding.EncodeToString(caBundle)))
	// The API server takes up a new configuration in the background: wait
	// until a dry run reaches the webhook.
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "probe"}}}
	waitUntil(t, "the webhook is called", func() bool {
		_, err := dynClient(t).Resource(secrets).Namespace(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry run of the probe: %v", err)
		}
		return calls.Load() > 0
	})
}

// waitUntil polls done for at most 30 seconds.
func waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s until %s", what)
		}
	}
}

// forceBackupDir makes the runs of the test save objects under a
// directory of its own, and returns that directory.
func forceBackupDir(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	return filepath.Join(cache, "kapply", "force-backups")
}

// assertSavedCopy checks the copy saved at path: readable by its owner
// only, the original Secret with its keys but not their values (a file in
// the user's cache outlives the run), labels and annotations, no
// last-applied record (kubectl's holds the values), and nothing a create
// refuses. It runs in the webhook too, so it never stops
// the test.
func assertSavedCopy(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Errorf("the saved copy: %v", err)
		return
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the saved copy has mode %v, want 0600", info.Mode().Perm())
	}
	content, err := os.ReadFile(path)
	var saved unstructured.Unstructured
	if err == nil {
		err = yaml.Unmarshal(content, &saved.Object)
	}
	if err != nil {
		t.Errorf("reading the saved copy: %v\n%s", err, content)
		return
	}
	password, hasKey, _ := unstructured.NestedString(saved.Object, "data", "password")
	immutable, _, _ := unstructured.NestedBool(saved.Object, "immutable")
	if saved.GetKind() != "Secret" || saved.GetName() != "s" || !hasKey || password != "" || !immutable ||
		saved.GetLabels()["keep"] != "me" || saved.GetAnnotations()["note"] != "kept" {
		t.Errorf("the saved copy is not the original Secret's keys without values:\n%s", content)
	}
	for _, value := range forceValues {
		if strings.Contains(string(content), value) || strings.Contains(string(content), b64(value)) {
			t.Errorf("the saved copy holds a value of the Secret:\n%s", content)
		}
	}
	if _, has := saved.GetAnnotations()[lastapplied.Annotation]; has {
		t.Errorf("the saved copy keeps the last-applied record:\n%s", content)
	}
	if saved.GetUID() != "" || saved.GetResourceVersion() != "" || saved.GetManagedFields() != nil || strings.Contains(string(content), "creationTimestamp") {
		t.Errorf("the saved copy keeps what a create refuses or ignores:\n%s", content)
	}
}

// savedCopies are the copies saved of Secret s in ns.
func savedCopies(t *testing.T, dir, ns string) []string {
	matches, err := filepath.Glob(filepath.Join(dir, "secret_"+ns+"_s-*.yaml"))
	if err != nil {
		t.Error(err)
	}
	return matches
}

// liveSecret is the live Secret s's password, decoded, and its UID; ""
// when there is no such Secret.
func liveSecret(t *testing.T, ns string) (password string, uid string) {
	t.Helper()
	live, err := dynClient(t).Resource(secrets).Namespace(ns).Get(context.Background(), "s", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", ""
	}
	if err != nil {
		t.Fatal(err)
	}
	encoded, _, _ := unstructured.NestedString(live.Object, "data", "password")
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return string(decoded), string(live.GetUID())
}

// forceSecretRun applies Secret s in a new namespace, registers the webhook
// decide (see createWebhook) and changes the file to the new value.
func forceSecretRun(t *testing.T, decide func(ctx context.Context, secret *corev1.Secret) error) (ns, files, uid string) {
	t.Helper()
	ns = cluster.Namespace(t)
	files = writeFiles(t, map[string]string{"s.yaml": immutableSecret(forceOldValue)})
	mustApply(t, files, ns, "secret/s created\n")
	_, uid = liveSecret(t, ns)
	createWebhook(t, ns, decide)
	writeFile(t, files, "s.yaml", immutableSecret(forceNewValue))
	return ns, files, uid
}

// printedCopy is the path apply printed for the copy of Secret s, checked
// to be the one file saved.
func printedCopy(t *testing.T, r result, saved []string) string {
	t.Helper()
	printed := savedLine.FindStringSubmatch(r.stderr)
	if len(saved) != 1 || printed == nil || printed[1] != saved[0] {
		t.Fatalf("saved copies seen during the create: %v; printed:\n%s", saved, r.stderr)
	}
	return saved[0]
}

// TestForceSavesTheOriginalUntilReplaced: before deleting, apply --force
// saves the original object to a file readable by its owner only (the
// Secret's values, labels and annotations; no uid or resourceVersion),
// prints its path — never a value — and removes the file once the new
// object exists.
func TestForceSavesTheOriginalUntilReplaced(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	var seen atomic.Pointer[[]string]
	ns, files, uid := forceSecretRun(t, func(_ context.Context, s *corev1.Secret) error {
		if string(s.Data["password"]) == forceNewValue {
			// The create of the new object: the original is saved by now.
			saved := savedCopies(t, dir, s.Namespace)
			for _, path := range saved {
				assertSavedCopy(t, path)
			}
			seen.Store(&saved)
		}
		return nil
	})

	r := kapply(t, "apply", "-f", files, "-n", ns, "--force")
	assertAbsent(t, "stdout", r.stdout, forceValues)
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if r.code != 0 || r.stdout != "secret/s configured\n" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	if seen.Load() == nil {
		t.Fatal("the webhook saw no create of the new object")
	}
	path := printedCopy(t, r, *seen.Load())
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the saved copy %s is still there once the new object exists (%v)", path, err)
	}
	if password, newUID := liveSecret(t, ns); password != forceNewValue || newUID == uid {
		t.Errorf("the Secret was not replaced: uid %s (was %s)", newUID, uid)
	}
}

// interruptCreate is a webhook's decision that holds the create of the new
// object (forceNewValue) until the API server gives up on the call, having
// cancelled the run as the first SIGINT does; it tells the saved copies it
// found; it passes any other create.
func interruptCreate(t *testing.T, dir string, cancel context.CancelFunc, seen *atomic.Pointer[[]string]) func(context.Context, *corev1.Secret) error {
	return func(ctx context.Context, s *corev1.Secret) error {
		if string(s.Data["password"]) != forceNewValue {
			return nil
		}
		saved := savedCopies(t, dir, s.Namespace)
		seen.Store(&saved)
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second):
		}
		return nil
	}
}

// TestForceInterruptedRestoresTheOriginal: SIGINT (the run's context
// cancelled) while the create of the new object is held by a slow
// admission webhook: the API server drops the create, and apply creates
// the original again on a context of its own, says so, exits 1, and
// removes the saved copy. No value is printed.
func TestForceInterruptedRestoresTheOriginal(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Pointer[[]string]
	ns, files, uid := forceSecretRun(t, interruptCreate(t, dir, cancel, &seen))

	r := kapplyContext(t, ctx, "apply", "-f", files, "-n", ns, "--force")
	assertAbsent(t, "stdout", r.stdout, forceValues)
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if r.code != exitFailed || !strings.Contains(r.stderr, "context canceled") || !strings.Contains(r.stderr, "the original object was restored") {
		t.Errorf("exit %d, want %d, the interruption and the restore\n%s", r.code, exitFailed, r.stderr)
	}
	if seen.Load() == nil {
		t.Fatalf("the webhook saw no create of the new object\n%s", r.stderr)
	}
	path := printedCopy(t, r, *seen.Load())
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the saved copy %s is still there once the original is restored (%v)", path, err)
	}
	if password, newUID := liveSecret(t, ns); password != forceOldValue || newUID == uid {
		t.Errorf("the original was not created again: password matches %v, uid %q (was %s)", password == forceOldValue, newUID, uid)
	}
}

// TestForceKeepsTheCopyWhenNothingCanBeCreated: the run interrupted as in
// TestForceInterruptedRestoresTheOriginal, and the webhook denies the
// original's create too: the object is gone, the error names the saved
// copy, which stays (0600, the original's keys without their values) and
// says the Secret comes back from its files: kapply apply -f brings it
// back.
func TestForceKeepsTheCopyWhenNothingCanBeCreated(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Pointer[[]string]
	var denyRestore atomic.Bool
	denyRestore.Store(true)
	decide := interruptCreate(t, dir, cancel, &seen)
	ns, files, _ := forceSecretRun(t, func(ctx context.Context, s *corev1.Secret) error {
		if string(s.Data["password"]) == forceOldValue && denyRestore.Load() {
			return errors.New("the test denies the original")
		}
		return decide(ctx, s)
	})

	r := kapplyContext(t, ctx, "apply", "-f", files, "-n", ns, "--force")
	assertAbsent(t, "stdout", r.stdout, forceValues)
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if seen.Load() == nil {
		t.Fatalf("the webhook saw no create of the new object\n%s", r.stderr)
	}
	path := printedCopy(t, r, *seen.Load())
	if r.code != exitFailed || !strings.Contains(r.stderr, "the test denies the original") || !strings.Contains(r.stderr, "the original Secret's keys, not its values, are saved in "+path+": create it again from its files (kapply apply -f)") {
		t.Errorf("exit %d, want %d, the restore's denial and the saved copy\n%s", r.code, exitFailed, r.stderr)
	}
	assertSavedCopy(t, path)
	if password, _ := liveSecret(t, ns); password != "" {
		t.Fatal("the Secret exists: the run never reached the state where neither create succeeds")
	}

	denyRestore.Store(false)
	mustRun(t, "apply", "-f", files, "-n", ns)
	if password, _ := liveSecret(t, ns); password != forceNewValue {
		t.Error("apply -f of the files did not create the Secret again")
	}
}

// denyLegacyCreates installs, for the namespaces only, a
// ValidatingAdmissionPolicy that denies the CREATE of any object labelled
// tier=legacy, and waits until the API server applies it.
func denyLegacyCreates(t *testing.T, namespaces ...string) {
	t.Helper()
	name := "deny-legacy-" + namespaces[0]
	createClusterObject(t, validatingPolicies, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: ["*"]}
  validations:
  - expression: "!has(object.metadata.labels) || !('tier' in object.metadata.labels) || object.metadata.labels['tier'] != 'legacy'"
    message: "objects labelled tier=legacy may not be created"
`, name))
	createClusterObject(t, policyBindings, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [%[2]s]}]
`, name, strings.Join(namespaces, ", ")))
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "probe", "labels": map[string]any{"tier": "legacy"}}}}
	// The API server compiles a new policy in the background.
	for _, ns := range namespaces {
		waitUntil(t, "the policy denies", func() bool {
			_, err := dynClient(t).Resource(configMaps).Namespace(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err != nil
		})
	}
}

// legacyJob is Job j labelled tier=legacy, running image.
func legacyJob(image string) string {
	return strings.Replace(jobWithImage(image), "metadata: {name: j}", "metadata: {name: j, labels: {tier: legacy}}", 1)
}

// TestForceRefusedWhenTheCreateWouldBeDenied: a ValidatingAdmissionPolicy
// denies the CREATE of objects labelled tier=legacy, and such a Job is
// live. apply --force of a change to its template (immutable) asks the
// server's dry run of the create first, is denied, and refuses before
// deleting: exit 1, the policy's message, nothing saved, the Job still
// there with its UID (kubectl deletes it, and its create and restore are
// both denied: checked when kubectl is on PATH). Without the policy
// (another namespace), --force replaces.
func TestForceRefusedWhenTheCreateWouldBeDenied(t *testing.T) {
	testcluster.Require(t, cluster)
	forceBackupDir(t)
	guarded, free, kubectls := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	files := writeFiles(t, map[string]string{"j.yaml": legacyJob("busybox:1")})
	for _, ns := range []string{guarded, free, kubectls} {
		mustApply(t, files, ns, "job.batch/j created\n")
	}
	denyLegacyCreates(t, guarded, kubectls)
	writeFile(t, files, "j.yaml", legacyJob("busybox:2"))
	before, freeUID := liveObject(t, jobs, guarded, "j"), liveObject(t, jobs, free, "j").GetUID()

	r := kapply(t, "apply", "-f", files, "-n", guarded, "--force", "--grace-period=0")
	if r.code != exitFailed || r.stdout != "" || strings.Contains(r.stderr, "kapply: saved") ||
		!strings.Contains(r.stderr, "field is immutable; --force: not deleting the object: the server refuses to create it from the file") ||
		!strings.Contains(r.stderr, "objects labelled tier=legacy may not be created") {
		t.Errorf("exit %d, want %d and a refusal naming the policy's denial\nstdout: %q\n%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	after := liveObject(t, jobs, guarded, "j")
	if after.GetUID() != before.GetUID() || after.GetDeletionTimestamp() != nil {
		t.Errorf("the Job was deleted: uid %s (was %s), deletionTimestamp %v", after.GetUID(), before.GetUID(), after.GetDeletionTimestamp())
	}

	r = kapply(t, "apply", "-f", files, "-n", free, "--force", "--grace-period=0")
	if r.code != 0 || r.stdout != "job.batch/j configured\n" {
		t.Errorf("without the policy: exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	if uid := liveObject(t, jobs, free, "j").GetUID(); uid == freeUID {
		t.Error("without the policy: the Job was not replaced")
	}

	if !testcluster.HaveKubectl(t) {
		return
	}
	k := kubectlRun(t, "", "apply", "-f", files, "-n", kubectls, "--force", "--grace-period=0")
	_, err := dynClient(t).Resource(jobs).Namespace(kubectls).Get(context.Background(), "j", metav1.GetOptions{})
	if k.code == 0 || !apierrors.IsNotFound(err) {
		t.Errorf("kubectl no longer loses the object (exit %d, reading it: %v); docs/kubectl-differences.md says it does\n%s", k.code, err, k.stderr)
	}
}

// TestForceInterruptedWhileTerminatingRestoresTheOriginal: SIGINT while
// apply --force waits for the deleted object to be gone (a finalizer holds
// it): once the finalizer goes, apply creates the original again on a
// context of its own, exits 1 saying so, and removes the saved copy.
func TestForceInterruptedWhileTerminatingRestoresTheOriginal(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	ns := cluster.Namespace(t)
	held := func(value string) string {
		return strings.Replace(immutableSecret(value), "  name: s\n", "  name: s\n  finalizers: [kapply.dev/hold]\n", 1)
	}
	files := writeFiles(t, map[string]string{"s.yaml": held(forceOldValue)})
	mustApply(t, files, ns, "secret/s created\n")
	_, uid := liveSecret(t, ns)
	writeFile(t, files, "s.yaml", held(forceNewValue))
	client := dynClient(t).Resource(secrets).Namespace(ns)
	release := func() error {
		_, err := client.Patch(context.Background(), "s", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan error, 1)
	go func() {
		// SIGINT once the Secret is terminating, then let it go.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			live, err := client.Get(context.Background(), "s", metav1.GetOptions{})
			if err == nil && live.GetUID() == types.UID(uid) && live.GetDeletionTimestamp() != nil {
				cancel()
				time.Sleep(300 * time.Millisecond)
				interrupted <- release()
				return
			}
		}
		interrupted <- errors.New("the Secret never started terminating")
	}()
	r := kapplyContext(t, ctx, "apply", "-f", files, "-n", ns, "--force")
	if err := <-interrupted; err != nil {
		t.Fatal(err)
	}
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if r.code != exitFailed || !strings.Contains(r.stderr, "context canceled") || !strings.Contains(r.stderr, "the original object was restored") {
		t.Errorf("exit %d, want %d, the interruption and the restore\n%s", r.code, exitFailed, r.stderr)
	}
	if saved := savedCopies(t, dir, ns); len(saved) != 0 {
		t.Errorf("saved copies left once the original is restored: %v", saved)
	}
	password, newUID := liveSecret(t, ns)
	if password != forceOldValue || newUID == uid {
		t.Errorf("the original was not created again: password matches %v, uid %q (was %s)", password == forceOldValue, newUID, uid)
	}
	if newUID != "" {
		if err := release(); err != nil {
			t.Error(err)
		}
	}
}
