package main

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

var validatingWebhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// decodingWebhook registers, for Secrets of ns, a validating webhook served
// by the test that decodes the Secret's values, as a webhook may, and
// quotes them: it denies a Secret with the key "hook" (`the secret's value
// "VALUE" is a secret word; key: VALUE`) and warns on one with the key
// "warnhook" (`the secret holds "VALUE", a secret`).
func decodingWebhook(t *testing.T, ns string) {
	t.Helper()
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var secret struct{ Data map[string][]byte }
		_ = json.Unmarshal(review.Request.Object.Raw, &secret)
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if v, ok := secret.Data["hook"]; ok {
			resp.Allowed = false
			resp.Result = &metav1.Status{Message: fmt.Sprintf(`the secret's value %q is a secret word; key: %s`, v, v)}
		}
		if v, ok := secret.Data["warnhook"]; ok {
			resp.Warnings = []string{fmt.Sprintf(`the secret holds %q, a secret`, v)}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(server.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	createClusterObject(t, validatingWebhooks, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: decode-%[1]s}
webhooks:
- name: decode.kapply.test
  clientConfig: {url: %[2]q, caBundle: %[3]s}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[1]s}}
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Fail
  timeoutSeconds: 10
`, ns, server.URL, base64.StdEncoding.EncodeToString(ca)))
}

// quotingPolicy installs, for Secrets of ns, a ValidatingAdmissionPolicy
// that denies a Secret with the key "policy", quoting its value as CEL
// sees it (base64): `secret value "VALUE" is not allowed for a secret; key:
// VALUE`.
func quotingPolicy(t *testing.T, ns string) {
	t.Helper()
	name := "quote-" + ns
	createClusterObject(t, validatingPolicies, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}
  validations:
  - expression: "!has(object.data) || !('policy' in object.data)"
    messageExpression: "'secret value \"' + string(object.data['policy']) + '\" is not allowed for a secret; key: ' + string(object.data['policy'])"
`, name))
	createClusterObject(t, policyBindings, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %s}
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %s}
`, name, ns))
}

// TestErrorsMaskSecretValuesNotWords: a Secret whose value is the word
// "secret", denied by an admission policy and by a webhook whose messages
// quote the value (base64, and decoded) and use the word "secret": apply
// (any -o, dry runs, --server-side) and diff print the word, and the value
// masked where the message quotes it or gives it as a field's value; a
// webhook's warning likewise.
func TestErrorsMaskSecretValuesNotWords(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	quotingPolicy(t, ns)
	decodingWebhook(t, ns)
	secretWith := func(key string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\ndata: {%s: %s}\n", key, key, b64("secret"))
	}
	hook := writeFiles(t, map[string]string{"s.yaml": secretWith("hook")})
	policy := writeFiles(t, map[string]string{"s.yaml": secretWith("policy")})
	// Each message as the server gives it, and as it must print.
	hookDenial := `admission webhook "decode.kapply.test" denied the request: the secret's value "***" is a secret word; key: ***`
	policyDenial := fmt.Sprintf(`secrets "policy" is forbidden: ValidatingAdmissionPolicy 'quote-%[1]s' with binding 'quote-%[1]s' denied `+
		`request: secret value "***" is not allowed for a secret; key: ***`, ns)
	// The API server loads new admission configuration in the background:
	// wait until both deny.
	for _, dir := range []string{hook, policy} {
		deadline := time.Now().Add(30 * time.Second)
		for kapply(t, "apply", "-f", dir, "-n", ns, "--dry-run=server").code != exitFailed {
			if time.Now().After(deadline) {
				t.Fatalf("%s was never denied", dir)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	leaks := []string{`"secret"`, "'secret'", ": secret\n", b64("secret"), b64(`"secret"`)}
	for _, c := range []struct{ dir, want string }{{hook, hookDenial}, {policy, policyDenial}} {
		runs := [][]string{{"apply"}, {"apply", "-o", "yaml"}, {"apply", "-o", "json"}, {"apply", "--dry-run=server"},
			{"apply", "--server-side"}, {"diff"}, {"diff", "--server-side"}}
		for _, run := range runs {
			r := kapply(t, append(run, "-f", c.dir, "-n", ns)...)
			what := fmt.Sprint(run, " ", c.dir)
			assertAbsent(t, what+" stdout", r.stdout, leaks)
			assertAbsent(t, what+" stderr", r.stderr, leaks)
			wantCode := exitFailed
			if run[0] == "diff" {
				wantCode = exitError
			}
			if r.code != wantCode || !strings.Contains(r.stderr, c.want+"\n") {
				t.Errorf("%s: exit %d, want a failure and\n%s\nstderr:\n%s", what, r.code, c.want, r.stderr)
			}
		}
	}
	warned := writeFiles(t, map[string]string{"s.yaml": secretWith("warnhook")})
	// diff first: once the Secret exists, nothing is written, and nothing warns.
	for _, run := range [][]string{{"diff"}, {"apply", "--dry-run=server"}, {"apply", "-o", "yaml"}} {
		r := kapply(t, append(run, "-f", warned, "-n", ns)...)
		assertAbsent(t, fmt.Sprint(run, " warned"), r.stderr, leaks)
		if !strings.Contains(r.stderr, `: the secret holds "***", a secret`+"\n") {
			t.Errorf("%v warned: exit %d\n%s", run, r.code, r.stderr)
		}
	}
}
