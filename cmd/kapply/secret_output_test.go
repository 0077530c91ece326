package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// assertNoRecordValue fails when a run printed a value of the record
// tests' Secret, plain or base64, on stdout or stderr.
func assertNoRecordValue(t *testing.T, what string, r result) {
	t.Helper()
	assertAbsent(t, what+" stdout", r.stdout, recordValues)
	assertAbsent(t, what+" stderr", r.stderr, recordValues)
}

// outputsSecret is the Secret "out" with data alpha and stringData gamma,
// and a ConfigMap beside it.
func outputsSecret() string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: out}\ndata: {alpha: %s}\nstringData: {gamma: %s}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beside}\ndata: {k: v}\n", b64(recordAlpha), recordGamma)
}

// TestApplyOutputMasksSecretValues: apply -o yaml|json — created,
// configured and unchanged objects, a List of several, client and server
// dry runs — prints a Secret's keys with "***", never a value, nor the
// values of a plain record (--secret-record=plain, or kubectl's) on the
// returned object. -o name prints names.
func TestApplyOutputMasksSecretValues(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"objects.yaml": outputsSecret()})
	runs := [][]string{
		{"--dry-run=client", "-o", "yaml"}, {"--dry-run=server", "-o", "json"},
		{"-o", "yaml"},                          // created
		{"-o", "json"},                          // unchanged: the live object
		{"-o", "yaml", "--secret-record=plain"}, // configured, a plain record returned
		{"-o", "json", "--secret-record=plain"}, // unchanged: live, with its plain record
		{"--dry-run=client", "-o", "yaml", "--secret-record=plain"},            // live, with its plain record
		{"--dry-run=server", "-o", "yaml"}, {"--dry-run=client", "-o", "json"}, // plain record replaced
		{"-o", "name"},
	}
	for _, extra := range runs {
		r := kapply(t, append([]string{"apply", "-f", dir, "-n", ns}, extra...)...)
		what := "apply " + strings.Join(extra, " ")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
		assertNoRecordValue(t, what, r)
		if extra[len(extra)-1] == "name" {
			if r.stdout != "secret/out\nconfigmap/beside\n" && r.stdout != "configmap/beside\nsecret/out\n" {
				t.Errorf("%s: %q", what, r.stdout)
			}
			continue
		}
		if !strings.Contains(r.stdout, "alpha") || !strings.Contains(r.stdout, "***") || !strings.Contains(r.stdout, "beside") {
			t.Errorf("%s: no masked Secret beside the ConfigMap:\n%s", what, r.stdout)
		}
	}
	kubectl(t, "apply", "-f", dir, "-n", ns)
	r := kapply(t, "apply", "-f", dir, "-n", ns, "-o", "yaml", "--dry-run=client", "--secret-record=plain")
	assertNoRecordValue(t, "apply -o yaml over kubectl's record", r)
}

// TestExportMasksSecretValues: export prints a Secret's keys masked, in
// YAML and JSON, and says so; --show-secrets prints the values, as a file
// that applies.
func TestExportMasksSecretValues(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"objects.yaml": outputsSecret()}), "-n", ns)
	for _, output := range []string{"yaml", "json"} {
		r := mustRun(t, "export", "secret/out", "-n", ns, "-o", output)
		assertNoRecordValue(t, "export -o "+output, r)
		if !strings.Contains(r.stdout, "alpha") || !strings.Contains(r.stdout, "gamma") || !strings.Contains(r.stdout, "***") ||
			!strings.Contains(r.stderr, "the values are masked; --show-secrets writes them") {
			t.Errorf("export -o %s:\n%s\n%s", output, r.stdout, r.stderr)
		}
	}
	r := mustRun(t, "export", "secret/out", "-n", ns, "--show-secrets")
	if !strings.Contains(r.stdout, b64(recordAlpha)) || !strings.Contains(r.stdout, b64(recordGamma)) || strings.Contains(r.stdout, "***") {
		t.Errorf("export --show-secrets:\n%s", r.stdout)
	}
	dir := writeFiles(t, map[string]string{"exported.yaml": r.stdout})
	if r := mustRun(t, "apply", "-f", dir, "-n", ns); r.stdout != "secret/out configured\n" && r.stdout != "secret/out unchanged\n" {
		t.Errorf("applying the exported file: %q", r.stdout)
	}
}

// TestLastAppliedViewAndEditShowNoSecretValue: view (YAML, JSON) and the
// editor's buffer show a Secret's record redacted: kapply's record as it
// is, an older plain one (kubectl's) redacted for the view. Saving the
// buffer unchanged writes nothing; saving an edit writes the record
// redacted.
func TestLastAppliedViewAndEditShowNoSecretValue(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"objects.yaml": outputsSecret()})
	buffer := filepath.Join(t.TempDir(), "buffer.yaml")
	t.Setenv("KUBE_EDITOR", "cp \"$1\" "+buffer+"; true")
	check := func(when string) {
		t.Helper()
		for _, output := range []string{"yaml", "json"} {
			r := mustRun(t, "last-applied", "view", "secret/out", "-n", ns, "-o", output)
			assertNoRecordValue(t, when+": last-applied view -o "+output, r)
			if !strings.Contains(r.stdout, "kapply:hmac:") || !strings.Contains(r.stdout, "alpha") {
				t.Errorf("%s: view -o %s shows no redacted key:\n%s", when, output, r.stdout)
			}
		}
		r := mustRun(t, "last-applied", "edit", "secret/out", "-n", ns)
		assertNoRecordValue(t, when+": last-applied edit", r)
		content, err := os.ReadFile(buffer)
		if err != nil {
			t.Fatal(err)
		}
		assertAbsent(t, when+": the editor's buffer", string(content), recordValues)
		if r.stdout != "secret/out unchanged\n" || !strings.Contains(string(content), "kapply:hmac:") {
			t.Errorf("%s: edit saved unchanged: %q\nbuffer:\n%s", when, r.stdout, content)
		}
	}
	mustRun(t, "apply", "-f", dir, "-n", ns)
	check("kapply's record")
	kubectl(t, "apply", "-f", dir, "-n", ns)
	if plain := liveObject(t, secrets, ns, "out").GetAnnotations()[lastapplied.Annotation]; !strings.Contains(plain, recordGamma) {
		t.Fatalf("kubectl's record is not plain: %s", plain)
	}
	check("kubectl's plain record")

	t.Setenv("KUBE_EDITOR", script(t, `sed -i 's/^  name: out$/  labels: {edited: "yes"}\n  name: out/' "$1"`))
	r := mustRun(t, "last-applied", "edit", "secret/out", "-n", ns)
	assertNoRecordValue(t, "last-applied edit with a change", r)
	record := liveObject(t, secrets, ns, "out").GetAnnotations()[lastapplied.Annotation]
	assertAbsent(t, "the edited record", record, recordValues)
	if r.stdout != "secret/out edited\n" || !strings.Contains(record, `"edited":"yes"`) {
		t.Errorf("edit with a change: %q\nrecord %s", r.stdout, record)
	}
}

var (
	validatingPolicies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	policyBindings     = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// echoPolicy installs, for Secrets of ns only, a ValidatingAdmissionPolicy
// whose message quotes the value of data.KEY decoded, with action (Deny
// or Warn), and removes it when the test ends.
func echoPolicy(t *testing.T, ns, key, action string) {
	t.Helper()
	name := fmt.Sprintf("echo-%s-%s", strings.ToLower(action), ns)
	policy := fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}
  validations:
  - expression: "!has(object.data) || !('%[2]s' in object.data)"
    messageExpression: "'the value ' + string(object.data['%[2]s']) + ' is not allowed'"
`, name, key)
	binding := fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [%[2]s]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %[3]s}
`, name, action, ns)
	createClusterObject(t, validatingPolicies, policy)
	createClusterObject(t, policyBindings, binding)
}

// createClusterObject creates the cluster-scoped object of manifest and
// deletes it when the test ends.
func createClusterObject(t *testing.T, gvr schema.GroupVersionResource, manifest string) {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatal(err)
	}
	client := dynClient(t).Resource(gvr)
	created, err := client.Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.Delete(context.Background(), created.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting %s: %v", created.GetName(), err)
		}
	})
}

// TestApplyErrorsAndWarningsMaskSecretValues: an admission policy that
// quotes a Secret's value in its denial, or in a warning, is printed with
// the value masked, in every output format; the other objects apply.
func TestApplyErrorsAndWarningsMaskSecretValues(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	echoPolicy(t, ns, "beta", "Deny")
	echoPolicy(t, ns, "alpha", "Warn")
	denied := writeFiles(t, map[string]string{"secret.yaml": turnsSecret("alpha", "beta")})
	// The API server compiles a new policy in the background: wait until
	// it denies.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := kapply(t, "apply", "-f", denied, "-n", ns, "--dry-run=server")
		if r.code == exitFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy never denied: exit %d\n%s", r.code, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, extra := range [][]string{nil, {"-o", "yaml"}, {"-o", "json"}, {"-o", "name"}, {"--dry-run=server"}, {"--server-side"}} {
		r := kapply(t, append([]string{"apply", "-f", denied, "-n", ns}, extra...)...)
		what := fmt.Sprint("denied apply ", extra)
		assertNoRecordValue(t, what, r)
		if r.code != exitFailed || !strings.Contains(r.stderr, "the value *** is not allowed") {
			t.Errorf("%s: exit %d, want %d and the masked denial\n%s", what, r.code, exitFailed, r.stderr)
		}
	}
	for _, extra := range [][]string{nil, {"--server-side"}} {
		r := kapply(t, append([]string{"diff", "-f", denied, "-n", ns}, extra...)...)
		what := fmt.Sprint("denied diff ", extra)
		assertNoRecordValue(t, what, r)
		if r.code <= 1 || !strings.Contains(r.stderr, "the value *** is not allowed") {
			t.Errorf("%s: exit %d, want an error and the masked denial\n%s", what, r.code, r.stderr)
		}
	}
	warned := writeFiles(t, map[string]string{"secret.yaml": turnsSecret("alpha")})
	for _, extra := range [][]string{nil, {"-o", "yaml"}, {"--dry-run=server"}} {
		r := kapply(t, append([]string{"apply", "-f", warned, "-n", ns}, extra...)...)
		what := fmt.Sprint("warned apply ", extra)
		assertNoRecordValue(t, what, r)
		// The warning reaches stderr when apply hands the server's warnings
		// to the object's event (pkg/apply/warnings.go); then it is masked.
		if r.code != 0 || strings.Contains(r.stderr, "echo-warn-") && !strings.Contains(r.stderr, "the value *** is not allowed") {
			t.Errorf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
	}
}
