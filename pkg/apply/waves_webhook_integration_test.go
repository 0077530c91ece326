package apply_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/apply"
)

// slowWebhook is an HTTPS admission webhook that fails every call
// (HTTP 503: the API server's "failed calling webhook") until it is
// opened, then admits, adding a label when mutating.
type slowWebhook struct {
	server *httptest.Server
	open   atomic.Bool
	calls  atomic.Int64
}

func newSlowWebhook(t *testing.T) *slowWebhook {
	h := &slowWebhook{}
	h.server = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.server.Close)
	return h
}

func (h *slowWebhook) serve(w http.ResponseWriter, req *http.Request) {
	h.calls.Add(1)
	if !h.open.Load() {
		http.Error(w, "not serving yet", http.StatusServiceUnavailable)
		return
	}
	var review map[string]any
	if err := json.NewDecoder(req.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	request, _ := review["request"].(map[string]any)
	response := map[string]any{"uid": request["uid"], "allowed": true}
	if req.URL.Path == "/mutate" {
		patch := `[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]`
		response["patchType"] = "JSONPatch"
		response["patch"] = base64.StdEncoding.EncodeToString([]byte(patch))
	}
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

// configuration is a webhook configuration of kind (Validating or
// Mutating) calling path, for ConfigMaps labelled guarded=yes in ns.
func (h *slowWebhook) configuration(kind, name, path, ns string) *unstructured.Unstructured {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.server.Certificate().Raw})
	return mustYAML(fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %sWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.kapply.test
  clientConfig: {url: %q, caBundle: %s}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
  objectSelector: {matchLabels: {guarded: "yes"}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
`, kind, name, name, h.server.URL+path, base64.StdEncoding.EncodeToString(ca), ns))
}

// TestObjectsAWebhookAdmitsWaitForItToAnswer: a webhook configuration
// in the run whose server answers only after a delay: the ConfigMap it
// intercepts is sent once it answers, and nothing fails; the one it does
// not intercept goes at once. The same for a mutating webhook, whose
// label the ConfigMap then carries.
func TestObjectsAWebhookAdmitsWaitForItToAnswer(t *testing.T) {
	for _, kind := range []string{"Validating", "Mutating"} {
		t.Run(kind, func(t *testing.T) {
			ns := "waves-webhook-" + map[string]string{"Validating": "v", "Mutating": "m"}[kind]
			w := newPlanWorld(t, ns)
			hook := newSlowWebhook(t)
			path := map[string]string{"Validating": "/validate", "Mutating": "/mutate"}[kind]
			config := hook.configuration(kind, ns, path, w.ns)
			gvr := k8sschema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: map[string]string{
				"Validating": "validatingwebhookconfigurations", "Mutating": "mutatingwebhookconfigurations"}[kind]}
			t.Cleanup(func() { dyn(t).Resource(gvr).Delete(context.Background(), ns, metav1.DeleteOptions{}) })
			guarded := w.configMap("guarded", map[string]any{"k": "v"})
			guarded.SetLabels(map[string]string{"guarded": "yes"})
			objects := []*unstructured.Unstructured{guarded, w.configMap("free", map[string]any{"k": "v"}), config}
			clock := &eventClock{}
			done := make(chan []apply.Event)
			go func() {
				events, err := w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{OnEvent: clock.onEvent})
				if err != nil {
					t.Error(err)
				}
				done <- events
			}()
			for start := time.Now(); hook.calls.Load() == 0; time.Sleep(50 * time.Millisecond) {
				if time.Since(start) > time.Minute {
					t.Fatal("the webhook was never called")
				}
			}
			time.Sleep(2 * time.Second)
			openedAt := time.Now()
			hook.open.Store(true)
			events := <-done
			failOnFailures(t, events)
			if g := clock.when("guarded"); !g.After(openedAt) {
				t.Errorf("guarded's event at %v, before the webhook answered at %v", g, openedAt)
			}
			if f := clock.when("free"); !f.Before(openedAt) {
				t.Errorf("free's event at %v: it waited for a webhook that does not intercept it (answered at %v)", f, openedAt)
			}
			t.Logf("waves: guarded %d (%s), free %d, configuration %d", events[0].Wave, events[0].WaveReason, events[1].Wave, events[2].Wave)
			if kind == "Mutating" {
				if got := w.read(configMaps, "guarded").GetLabels()["mutated"]; got != "yes" {
					t.Errorf("the mutating webhook's label is missing: %q", got)
				}
			}
		})
	}
}
