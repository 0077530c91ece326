package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const ingressNginx = "/work/shared/realworld/ingress-nginx/deploy.yaml"

// TestAnIngressWaitsForIngressNginxsWebhook: ingress-nginx's install with
// an Ingress added: the Ingress waits for the admission webhook, which
// nothing serves in the test cluster (no nodes run its pods). Dry runs
// never wait; a real run with --timeout 5s ends fast with exit 1, the
// Ingress not sent and its failure naming what it waited for.
func TestAnIngressWaitsForIngressNginxsWebhook(t *testing.T) {
	install, err := os.ReadFile(ingressNginx)
	if err != nil {
		t.Skipf("real-world manifests: %v", err)
	}
	ns := cluster.Namespace(t)
	ingress := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: " + ns + "}\n" +
		"spec:\n  ingressClassName: nginx\n  rules:\n  - host: web.example.com\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n" +
		"        backend: {service: {name: web, port: {number: 80}}}\n"
	dir := writeFiles(t, map[string]string{"install.yaml": string(install), "ingress.yaml": ingress})
	webhooks := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	t.Cleanup(func() {
		// Nothing serves it: it would refuse every Ingress of later tests.
		_ = dynClient(t).Resource(webhooks).Delete(context.Background(), "ingress-nginx-admission", metav1.DeleteOptions{})
	})

	for _, dryRun := range []string{"client", "server"} {
		start := time.Now()
		r := kapply(t, "apply", "-f", dir, "--dry-run="+dryRun, "--timeout", "5s")
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("--dry-run=%s took %v", dryRun, took)
		}
		if !strings.Contains(r.stdout, "ingress.networking.k8s.io/web") {
			t.Errorf("--dry-run=%s: exit %d\n%s\n%s", dryRun, r.code, r.stdout, r.stderr)
		}
	}

	start := time.Now()
	r := kapply(t, "apply", "-f", dir, "--timeout", "5s", "-o", "events")
	took := time.Since(start)
	t.Logf("exit %d in %v\n%s", r.code, took, r.stderr)
	if took > time.Minute {
		t.Errorf("--timeout 5s: the run took %v", took)
	}
	if r.code != exitFailed {
		t.Errorf("exit %d, want %d", r.code, exitFailed)
	}
	var line string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, `"name":"web"`) && strings.Contains(l, `"Ingress"`) {
			line = l
		}
	}
	if !strings.Contains(line, "was not sent") || !strings.Contains(line, `"wave"`) {
		t.Errorf("the Ingress's event: %q, want failed: its wave not sent, with its wave", line)
	}
	t.Logf("Ingress event: %s", line)
	ingresses := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	if _, err := dynClient(t).Resource(ingresses).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{}); err == nil {
		t.Errorf("the Ingress was created")
	}
}
