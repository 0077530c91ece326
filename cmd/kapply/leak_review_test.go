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
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// Hostile review of Secret masking and apply --force: the cases the first
// tests did not choose.

// TestVmoduleBodiesNeedLogBodies: --vmodule raising client-go's files to
// the levels that log bodies (here with -v=1, or with a pattern that turns
// klog's output on) is refused without --log-bodies, as -v=8 is: it logged
// the Secret's data.
func TestVmoduleBodiesNeedLogBodies(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const password = "vmodule-hunter2-9x"
	dir := writeFiles(t, map[string]string{
		"secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: %s}\n", password),
	})
	mustApply(t, dir, ns, "secret/s created\n")
	leaks := []string{password, b64(password)}
	for _, flags := range [][]string{
		{"-v=1", "--vmodule=simple=9,request=9"},
		{"--vmodule=root=1,simple=9,request=9"},
		{"-v=2", "--vmodule", "*=8"},
	} {
		r := kapply(t, append([]string{"apply", "-f", filepath.Join(dir, "secret.yaml"), "-n", ns}, flags...)...)
		assertAbsent(t, fmt.Sprint(flags), r.stderr, leaks)
		if r.code != exitError || !strings.Contains(r.stderr, "pass --log-bodies") {
			t.Errorf("%v: exit %d, want %d and the --log-bodies refusal\n%s", flags, r.code, exitError, r.stderr)
		}
	}
	r := kapply(t, "apply", "-f", filepath.Join(dir, "secret.yaml"), "-n", ns, "-v=1", "--vmodule=simple=7,request=7")
	assertAbsent(t, "vmodule 7", r.stderr, leaks)
	if r.code != 0 {
		t.Errorf("--vmodule at 7: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, "apply", "-f", filepath.Join(dir, "secret.yaml"), "-n", ns, "--vmodule=simple=9", "--log-bodies"); r.code != 0 {
		t.Errorf("--vmodule=simple=9 --log-bodies: exit %d\n%s", r.code, r.stderr)
	}
}

// TestServerSideErrorsMaskNonStringValues: a Secret whose stringData holds
// what YAML reads as a number, a boolean or a map (an unquoted PIN, a
// mis-indented block): the server's server-side apply error quotes each
// (`got &value.valueUnstructured{Value:73519}`, the map's strings quoted);
// apply and diff --server-side print them masked.
func TestServerSideErrorsMaskNonStringValues(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"secret.yaml": `apiVersion: v1
kind: Secret
metadata: {name: typed}
stringData:
  pin: 73519
  ratio: 0.8317
  config:
    password: nested-hunter2-7q
    list: [listed-hunter3-8w]
`})
	leaks := []string{"73519", "0.8317", "nested-hunter2-7q", "listed-hunter3-8w"}
	for _, run := range [][]string{{"apply", "--server-side"}, {"diff", "--server-side"}, {"apply", "--server-side", "--dry-run=server", "-o", "yaml"}} {
		r := kapply(t, append(run, "-f", dir, "-n", ns)...)
		assertAbsent(t, fmt.Sprint(run, " stdout"), r.stdout, leaks)
		assertAbsent(t, fmt.Sprint(run, " stderr"), r.stderr, leaks)
		if r.code == 0 || !strings.Contains(r.stderr, ".stringData.pin: expected string") || !strings.Contains(r.stderr, "Value:***}") {
			t.Errorf("%v: exit %d, want the server's refusal with the value masked\n%s", run, r.code, r.stderr)
		}
	}
}

// quotingWebhook registers, for Secrets of ns, a validating webhook served
// by the test that denies every CREATE, UPDATE and DELETE (dry runs too)
// for which deny, given the Secret sent and the one stored, says why.
func quotingWebhook(t *testing.T, ns string, deny func(object, stored *corev1.Secret) string) {
	t.Helper()
	var calls atomic.Int64
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		calls.Add(1)
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var object, old corev1.Secret
		_ = json.Unmarshal(review.Request.Object.Raw, &object)
		_ = json.Unmarshal(review.Request.OldObject.Raw, &old)
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if why := deny(&object, &old); why != "" {
			resp.Allowed = false
			resp.Result = &metav1.Status{Message: why}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(server.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	createClusterObject(t, validatingWebhooks, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: quote-%[1]s}
webhooks:
- name: quote.kapply.test
  clientConfig: {url: %[2]q, caBundle: %[3]s}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [secrets]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[1]s}}
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Fail
  timeoutSeconds: 10
`, ns, server.URL, base64.StdEncoding.EncodeToString(ca)))
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "probe"}}}
	waitUntil(t, "the webhook is called", func() bool {
		_, err := dynClient(t).Resource(secrets).Namespace(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry run of the probe: %v", err)
		}
		return calls.Load() > 0
	})
}

// quoteBoth denies a Secret holding the key "quote", sent or stored,
// quoting both values (`new value "NEW", stored value "OLD"`), as a webhook
// comparing them may.
func quoteBoth(object, stored *corev1.Secret) string {
	newValue, sent := object.Data["quote"]
	oldValue, kept := stored.Data["quote"]
	if !sent && !kept {
		return ""
	}
	return fmt.Sprintf("new value %q, stored value %q", newValue, oldValue)
}

// quotedSecret is the Secret "q" holding quote: value, labelled l: v.
func quotedSecret(value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: q, labels: {l: v}}\ndata: {quote: %s}\n", b64(value))
}

// TestRecordWritesMaskStoredValues: adopt, last-applied set and release
// write only the record, but a webhook sees, and may quote, the whole
// Secret: the value the file gives and the one stored. Their errors print
// both masked (adopt printed the error as the server gave it; set and
// release masked only the file's values).
func TestRecordWritesMaskStoredValues(t *testing.T) {
	testcluster.Require(t, cluster)
	const stored, filed = "stored-value-4f1q", "filed-value-8z2w"
	leaks := []string{stored, filed, b64(stored), b64(filed)}
	check := func(what string, r result) {
		t.Helper()
		assertAbsent(t, what+" stdout", r.stdout, leaks)
		assertAbsent(t, what+" stderr", r.stderr, leaks)
		if r.code != exitFailed || !strings.Contains(r.stderr, `new value "***", stored value "***"`) {
			t.Errorf("%s: exit %d, want %d and the webhook's denial, masked\n%s", what, r.code, exitFailed, r.stderr)
		}
	}

	// adopt: the object made without a record, the file giving its value.
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"q.yaml": quotedSecret(stored)})
	obj := map[string]any{}
	if err := json.Unmarshal([]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"q","labels":{"l":"v"}},"data":{"quote":%q}}`, b64(stored))), &obj); err != nil {
		t.Fatal(err)
	}
	if _, err := dynClient(t).Resource(secrets).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotingWebhook(t, ns, quoteBoth)
	check("adopt", kapply(t, "adopt", "-f", dir, "-n", ns))
	check("adopt --dry-run=server", kapply(t, "adopt", "-f", dir, "-n", ns, "--dry-run=server"))

	// set and release: applied with one value, the file now giving another.
	ns = cluster.Namespace(t)
	dir = writeFiles(t, map[string]string{"q.yaml": quotedSecret(stored)})
	mustApply(t, dir, ns, "secret/q created\n")
	quotingWebhook(t, ns, quoteBoth)
	writeFile(t, dir, "q.yaml", quotedSecret(filed))
	check("last-applied set", kapply(t, "last-applied", "set", "-f", dir, "-n", ns))
	check("release", kapply(t, "release", "-f", dir, "-n", ns, "--field", "metadata.labels.l"))
}

// TestForceDeniedRestoreMasksTheOriginal: apply --force of an immutable
// Secret whose new create and whose restore a webhook denies, quoting the
// value it was given: the original's value (in no file, only in the live
// object) is masked too. The saved copy stays and is named.
func TestForceDeniedRestoreMasksTheOriginal(t *testing.T) {
	testcluster.Require(t, cluster)
	forceBackupDir(t)
	ns, files, _ := forceSecretRun(t, func(_ context.Context, s *corev1.Secret) error {
		return fmt.Errorf("the value %q is revoked", s.Data["password"])
	})
	r := kapply(t, "apply", "-f", files, "-n", ns, "--force")
	assertAbsent(t, "stdout", r.stdout, forceValues)
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if r.code != exitFailed || strings.Count(r.stderr, `the value "***" is revoked`) != 2 || !strings.Contains(r.stderr, "the original Secret's keys, not its values, are saved in ") {
		t.Errorf("exit %d, want %d, both denials masked and the saved copy named\n%s", r.code, exitFailed, r.stderr)
	}
}

// TestForceReplacesAServiceKeepingItsNodePort: a NodePort Service whose
// file pins the nodePort it has and changes its clusterIP (immutable):
// the dry run of the create is refused "provided port is already
// allocated" — by the Service itself, whose delete frees the port — so
// --force refused what kubectl replaces. It is replaced: a new UID, the
// new clusterIP, the same nodePort.
func TestForceReplacesAServiceKeepingItsNodePort(t *testing.T) {
	testcluster.Require(t, cluster)
	forceBackupDir(t)
	ns := cluster.Namespace(t)
	client := dynClient(t).Resource(services).Namespace(ns)
	service := func(extra string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec:\n  type: NodePort\n  selector: {app: np}\n" + extra
	}
	dir := writeFiles(t, map[string]string{"svc.yaml": service("  ports: [{port: 80}]\n")})
	mustApply(t, dir, ns, "service/np created\n")
	live, err := client.Get(context.Background(), "np", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructured.NestedSlice(live.Object, "spec", "ports")
	nodePort := ports[0].(map[string]any)["nodePort"]
	// A free clusterIP: one the server allocates, then frees.
	spare := writeFiles(t, map[string]string{"spare.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: spare}\nspec: {ports: [{port: 80}]}\n"})
	mustApply(t, spare, ns, "service/spare created\n")
	freeIP := liveField(t, ns, "spare", "spec", "clusterIP")
	mustRun(t, "delete", "-f", spare, "-n", ns, "--wait")

	writeFile(t, dir, "svc.yaml", service(fmt.Sprintf("  clusterIP: %s\n  ports: [{port: 80, nodePort: %v}]\n", freeIP, nodePort)))
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--force")
	if r.code != 0 || r.stdout != "service/np configured\n" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	after, err := client.Get(context.Background(), "np", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ = unstructured.NestedSlice(after.Object, "spec", "ports")
	if after.GetUID() == live.GetUID() || liveField(t, ns, "np", "spec", "clusterIP") != freeIP || ports[0].(map[string]any)["nodePort"] != nodePort {
		t.Errorf("not replaced as the file says: uid %s (was %s)\n%v", after.GetUID(), live.GetUID(), after.Object["spec"])
	}

	// A nodePort another Service holds is still refused before deleting.
	other := writeFiles(t, map[string]string{"other.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: other}\nspec:\n  type: NodePort\n  ports: [{port: 80}]\n"})
	mustApply(t, other, ns, "service/other created\n")
	otherPorts, _, _ := unstructured.NestedSlice(liveObject(t, services, ns, "other").Object, "spec", "ports")
	mustApply(t, spare, ns, "service/spare created\n")
	otherIP := liveField(t, ns, "spare", "spec", "clusterIP")
	mustRun(t, "delete", "-f", spare, "-n", ns, "--wait")
	writeFile(t, dir, "svc.yaml", service(fmt.Sprintf("  clusterIP: %s\n  ports: [{port: 80, nodePort: %v}]\n", otherIP, otherPorts[0].(map[string]any)["nodePort"])))
	r = kapply(t, "apply", "-f", dir, "-n", ns, "--force")
	if r.code != exitFailed || !strings.Contains(r.stderr, "not deleting the object") || !strings.Contains(r.stderr, "provided port is already allocated") {
		t.Errorf("a nodePort held by another Service: exit %d\n%s", r.code, r.stderr)
	}
	if uid := liveObject(t, services, ns, "np").GetUID(); uid != after.GetUID() {
		t.Errorf("the Service was replaced (uid %s, was %s)", uid, after.GetUID())
	}
}

// liveField is a string field of the live Service name.
func liveField(t *testing.T, ns, name string, path ...string) string {
	t.Helper()
	v, _, _ := unstructured.NestedString(liveObject(t, services, ns, name).Object, path...)
	return v
}

// startKapply starts the built kapply with args against the test cluster;
// wait returns what it printed and its exit code (-1: killed by a signal).
func startKapply(t *testing.T, args ...string) (proc *os.Process, wait func() result) {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd := exec.Command(builtKapply(t), append(args, "--kubeconfig", cluster.Kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process, func() result {
		err := cmd.Wait()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	}
}

// TestForceSIGTERMRestoresAndASecondSignalKeepsTheCopy: the kapply process
// gets SIGTERM (a CI runner stopping it, not a terminal's SIGINT) while a
// webhook holds the create of the new object: it creates the original
// again and exits 1. And when a second SIGTERM comes while the restore is
// held too, the process ends at once; the saved copy, whose path it
// printed before deleting, stays: 0600, the original with its value.
func TestForceSIGTERMRestoresAndASecondSignalKeepsTheCopy(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	builtKapply(t)
	var proc atomic.Pointer[os.Process]
	var holdRestore atomic.Bool
	hold := func(ctx context.Context) {
		if p := proc.Load(); p != nil {
			_ = p.Signal(syscall.SIGTERM)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second):
		}
	}
	ns, files, uid := forceSecretRun(t, func(ctx context.Context, s *corev1.Secret) error {
		switch value := string(s.Data["password"]); {
		case value == forceNewValue, value == forceOldValue && holdRestore.Load():
			hold(ctx)
		}
		return nil
	})

	p, wait := startKapply(t, "apply", "-f", files, "-n", ns, "--force")
	proc.Store(p)
	r := wait()
	assertAbsent(t, "stdout", r.stdout, forceValues)
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if r.code != exitFailed || !strings.Contains(r.stderr, "context canceled") || !strings.Contains(r.stderr, "the original object was restored") {
		t.Fatalf("SIGTERM: exit %d, want %d, the interruption and the restore\n%s", r.code, exitFailed, r.stderr)
	}
	password, restoredUID := liveSecret(t, ns)
	if password != forceOldValue || restoredUID == uid || len(savedCopies(t, dir, ns)) != 0 {
		t.Fatalf("SIGTERM: the original was not restored (password matches %v, uid %s, was %s), or copies remain: %v",
			password == forceOldValue, restoredUID, uid, savedCopies(t, dir, ns))
	}

	holdRestore.Store(true)
	p, wait = startKapply(t, "apply", "-f", files, "-n", ns, "--force")
	proc.Store(p)
	r = wait()
	assertAbsent(t, "stdout", r.stdout, forceValues)
	assertAbsent(t, "stderr", r.stderr, forceValues)
	if r.code != -1 {
		t.Errorf("a second SIGTERM: exit %d, want the process ended by the signal\n%s", r.code, r.stderr)
	}
	saved := savedCopies(t, dir, ns)
	path := printedCopy(t, r, saved)
	assertSavedCopy(t, path)
}

// TestForceReplacesAnObjectWithALongName: an immutable ConfigMap whose
// name has the 253 characters a name may have: the saved copy's file name
// (kind, namespace and name) was past the 255 bytes a file name may have,
// so --force refused to replace it (kubectl replaces it). It is replaced,
// the copy saved under a shortened name and removed.
func TestForceReplacesAnObjectWithALongName(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	ns := cluster.Namespace(t)
	name := strings.Repeat("n", 253)
	configMap := func(value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\nimmutable: true\ndata: {k: %s}\n", name, value)
	}
	files := writeFiles(t, map[string]string{"cm.yaml": configMap("one")})
	mustApply(t, files, ns, "configmap/"+name+" created\n")
	uid := liveObject(t, configMaps, ns, name).GetUID()
	writeFile(t, files, "cm.yaml", configMap("two"))
	r := kapply(t, "apply", "-f", files, "-n", ns, "--force")
	if r.code != 0 || r.stdout != "configmap/"+name+" configured\n" || !strings.Contains(r.stderr, "kapply: saved configmap/"+name+" -n "+ns+" to "+dir) {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	if after := liveObject(t, configMaps, ns, name); after.GetUID() == uid || after.Object["data"].(map[string]any)["k"] != "two" {
		t.Errorf("not replaced: uid %s (was %s), data %v", after.GetUID(), uid, after.Object["data"])
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("copies left: %v", left)
	}
}

// TestForceKeepsTheCopyWhenTheDeleteMayHaveBeenDone: the delete's answer
// is lost (the API server deleted the Secret, the connection broke), and
// every retry is answered 504 until the retry window closes. The last
// answer is the server's, but the object may be gone: --force took it
// for a refusal, removed the saved copy, and the Secret was nowhere. Now
// it reads the object and creates the original again.
func TestForceKeepsTheCopyWhenTheDeleteMayHaveBeenDone(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := forceBackupDir(t)
	ns := cluster.Namespace(t)
	files := writeFiles(t, map[string]string{"s.yaml": immutableSecret(forceOldValue)})
	mustApply(t, files, ns, "secret/s created\n")
	_, uid := liveSecret(t, ns)
	writeFile(t, files, "s.yaml", immutableSecret(forceNewValue))
	proxy := cluster.StartProxy(t)
	var deletes atomic.Int64
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method != http.MethodDelete || !strings.HasSuffix(req.URL.Path, "/secrets/s") {
			return testcluster.Pass
		}
		if deletes.Add(1) == 1 {
			return testcluster.Fault{LoseAnswer: true}
		}
		return testcluster.Fault{Status: http.StatusGatewayTimeout}
	})
	var out, errOut strings.Builder
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := exitCode(run([]string{"apply", "-f", files, "-n", ns, "--force", "--kubeconfig", proxy.Kubeconfig, "--request-timeout=2s"}, streams), &errOut)
	assertAbsent(t, "stderr", errOut.String(), forceValues)
	if deletes.Load() < 2 {
		t.Fatalf("the delete was not retried (%d deletes)\n%s", deletes.Load(), errOut.String())
	}
	password, newUID := liveSecret(t, ns)
	left := savedCopies(t, dir, ns)
	if password == "" && len(left) == 0 {
		t.Fatalf("exit %d: the Secret is gone and so is its saved copy\n%s", code, errOut.String())
	}
	if code != exitFailed || password != forceOldValue || newUID == uid || len(left) != 0 || !strings.Contains(errOut.String(), "the original object was restored") {
		t.Errorf("exit %d, want %d and the original restored (password matches %v, uid %s, was %s), no copy left (%v)\n%s",
			code, exitFailed, password == forceOldValue, newUID, uid, left, errOut.String())
	}
}

// TestWebhookQuotingPartsOfValuesIsMasked: a webhook's denial that prints
// bytes that are not UTF-8 as they are (they reach the client through
// JSON, each stray byte U+FFFD), one line of a PEM key, or the parts of a
// .dockerconfigjson (its auth, user:password, password): apply and diff
// print them masked.
func TestWebhookQuotingPartsOfValuesIsMasked(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const binary = "\xff\xfe\x00bin-Kx9-\x80\xc3"
	const keyLine = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCjwLsvckDWBxJp"
	pemKey := "-----BEGIN PRIVATE KEY-----\n" + keyLine + "\nWE4G4kCDtrP6JbPrxmzgI9YAXTbAz8kJdao275isjaTpPta0lzsmqp2AZOD5damC\n-----END PRIVATE KEY-----\n"
	auth := b64("robot:Pw-Doc-9x7Q2z")
	quotingWebhook(t, ns, func(object, _ *corev1.Secret) string {
		switch {
		case object.Data["raw"] != nil:
			return "raw bytes " + string(object.Data["raw"]) + " refused"
		case object.Data["tls.key"] != nil:
			return "bad key line " + strings.Split(string(object.Data["tls.key"]), "\n")[1]
		case object.Data[".dockerconfigjson"] != nil:
			var config struct {
				Auths map[string]struct{ Auth string }
			}
			_ = json.Unmarshal(object.Data[".dockerconfigjson"], &config)
			a := config.Auths["r.example.com"].Auth
			decoded, _ := base64.StdEncoding.DecodeString(a)
			_, password, _ := strings.Cut(string(decoded), ":")
			return fmt.Sprintf("registry r.example.com: auth %s, credentials %q, password %s refused", a, decoded, password)
		}
		return ""
	})
	dockerConfig := `{"auths":{"r.example.com":{"auth":"` + auth + `"}}}`
	dir := writeFiles(t, map[string]string{
		"raw.yaml":    fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: raw}\ndata: {raw: %s}\n", b64(binary)),
		"key.yaml":    fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: key}\ndata: {tls.key: %s}\n", b64(pemKey)),
		"docker.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: docker}\ntype: kubernetes.io/dockerconfigjson\ndata: {.dockerconfigjson: %s}\n", b64(dockerConfig)),
	})
	leaks := []string{"bin-Kx9-", keyLine, auth, "robot:Pw-Doc-9x7Q2z", "Pw-Doc-9x7Q2z"}
	for _, run := range [][]string{{"apply"}, {"diff"}} {
		r := kapply(t, append(run, "-f", dir, "-n", ns)...)
		assertAbsent(t, fmt.Sprint(run), r.stdout+r.stderr, leaks)
		for _, want := range []string{"raw bytes *** refused", "bad key line ***", `auth ***, credentials "***", password *** refused`} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: exit %d, no %q in\n%s", run, r.code, want, r.stderr)
			}
		}
	}
}
