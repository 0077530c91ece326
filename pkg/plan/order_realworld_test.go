package plan

import (
	"path/filepath"
	"testing"
)

const realworld = "/work/shared/realworld"

// certManagerInstall is the part of cert-manager's install that the
// corpus (its CRDs only) lacks, written after the chart's templates
// (webhook-service.yaml, webhook-deployment.yaml, webhook-*-webhook.yaml):
// the webhook's Service, Deployment and both configurations, then what a
// user applies with it.
const certManagerInstall = `
apiVersion: v1
kind: Namespace
metadata: {name: cert-manager}
---
apiVersion: v1
kind: Service
metadata: {name: cert-manager-webhook, namespace: cert-manager}
spec:
  type: ClusterIP
  ports: [{name: https, port: 443, protocol: TCP, targetPort: https}]
  selector: {app.kubernetes.io/name: webhook, app.kubernetes.io/instance: cert-manager, app.kubernetes.io/component: webhook}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cert-manager-webhook, namespace: cert-manager}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: webhook, app.kubernetes.io/instance: cert-manager, app.kubernetes.io/component: webhook}}
  template:
    metadata: {labels: {app: webhook, app.kubernetes.io/name: webhook, app.kubernetes.io/instance: cert-manager, app.kubernetes.io/component: webhook}}
    spec: {containers: [{name: cert-manager-webhook, image: quay.io/jetstack/cert-manager-webhook}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cert-manager, namespace: cert-manager}
spec:
  template:
    metadata: {labels: {app.kubernetes.io/name: cert-manager, app.kubernetes.io/instance: cert-manager, app.kubernetes.io/component: controller}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: cert-manager-webhook
  annotations: {cert-manager.io/inject-ca-from-secret: cert-manager/cert-manager-webhook-ca}
webhooks:
- name: webhook.cert-manager.io
  rules: [{apiGroups: [cert-manager.io], apiVersions: [v1], operations: [CREATE], resources: [certificaterequests]}]
  admissionReviewVersions: [v1]
  matchPolicy: Equivalent
  failurePolicy: Fail
  sideEffects: None
  clientConfig: {service: {name: cert-manager-webhook, namespace: cert-manager, path: /mutate}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: cert-manager-webhook
  annotations: {cert-manager.io/inject-ca-from-secret: cert-manager/cert-manager-webhook-ca}
webhooks:
- name: webhook.cert-manager.io
  namespaceSelector:
    matchExpressions: [{key: cert-manager.io/disable-validation, operator: NotIn, values: ["true"]}]
  rules: [{apiGroups: [cert-manager.io, acme.cert-manager.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: ["*/*"]}]
  admissionReviewVersions: [v1]
  matchPolicy: Equivalent
  failurePolicy: Fail
  sideEffects: None
  clientConfig: {service: {name: cert-manager-webhook, namespace: cert-manager, path: /validate}}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: selfsigned}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: ca, namespace: app}
spec: {ca: {secretName: ca}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web, namespace: app}
spec: {secretName: web-tls, dnsNames: [web.app.svc], issuerRef: {name: ca}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: app}
`

// TestOrderCertManagerShape: the Issuers and Certificates of a run that
// installs cert-manager are sent after its webhook's configuration and
// Deployment, once the Deployment is ready and the webhook answers; the
// rest (CRDs, the controller, a ConfigMap) goes first.
func TestOrderCertManagerShape(t *testing.T) {
	crds, err := filepath.Glob(filepath.Join(realworld, "cert-manager", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Skipf("cert-manager corpus not here (%v)", err)
	}
	nodes := append(readFileNodes(t, crds...), orderNodes(t, certManagerInstall)...)
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	index := map[string]int{}
	for i, n := range nodes {
		index[n.ID.Kind+"/"+n.ID.Name] = i
	}
	step := func(key string) int {
		i, ok := index[key]
		if !ok {
			t.Fatalf("%s not in the run", key)
		}
		return o.Waves[i]
	}
	for _, first := range []string{"ValidatingWebhookConfiguration/cert-manager-webhook", "MutatingWebhookConfiguration/cert-manager-webhook",
		"Deployment/cert-manager-webhook", "Service/cert-manager-webhook", "CustomResourceDefinition/issuers.cert-manager.io",
		"Deployment/cert-manager", "ConfigMap/web"} {
		if step(first) != 0 {
			t.Errorf("%s is in step %d, want 0", first, step(first))
		}
	}
	for _, after := range []string{"ClusterIssuer/selfsigned", "Issuer/ca", "Certificate/web"} {
		if step(after) != 1 {
			t.Errorf("%s is in step %d, want 1", after, step(after))
		}
	}
	if len(o.Gates) != 2 {
		t.Fatalf("%d steps, want 2", len(o.Gates))
	}
	g := o.Gates[1]
	if len(g.Ready) != 1 || g.Ready[0] != nodes[index["Deployment/cert-manager-webhook"]].ID {
		t.Errorf("step 1 waits for %v, want the webhook's Deployment", g.Ready)
	}
	if len(g.Webhooks) != 1 || g.Webhooks[0].Webhook != "webhook.cert-manager.io" ||
		g.Webhooks[0].Configuration != nodes[index["ValidatingWebhookConfiguration/cert-manager-webhook"]].ID {
		t.Errorf("step 1 webhooks %+v, want the validating webhook.cert-manager.io", g.Webhooks)
	}

	// A namespace labelled cert-manager.io/disable-validation=true is not
	// validated: its Issuer need not wait; the ClusterIssuer still does.
	disabled := func(ns string) map[string]string {
		return map[string]string{"cert-manager.io/disable-validation": "true"}
	}
	if o, err = Order(nodes, disabled); err != nil {
		t.Fatal(err)
	}
	if step := o.Waves[index["Issuer/ca"]]; step != 0 {
		t.Errorf("Issuer in a namespace with validation disabled: step %d, want 0", step)
	}
	if step := o.Waves[index["ClusterIssuer/selfsigned"]]; step != 1 {
		t.Errorf("ClusterIssuer: step %d, want 1", step)
	}
}

// TestOrderRealWorldInstalls: the seven install manifests order without
// error; the steps each gets are printed. ingress-nginx and gatekeeper
// bring webhooks with failurePolicy Fail: an Ingress or a Namespace added
// to their run goes after the controller that serves them, while their
// own objects (gatekeeper's namespace is excluded by name) stay in step 0.
func TestOrderRealWorldInstalls(t *testing.T) {
	extra := map[string]string{
		"ingress-nginx": "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: app}\n" +
			"spec: {ingressClassName: nginx, rules: [{host: web.example}]}\n",
		"gatekeeper": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
	}
	wantServer := map[string]string{"ingress-nginx": "ingress-nginx-controller", "gatekeeper": "gatekeeper-controller-manager"}
	for _, dir := range []string{"argo-cd", "cert-manager", "external-secrets", "gatekeeper", "ingress-nginx", "kube-state-metrics", "prometheus-operator"} {
		t.Run(dir, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(realworld, dir, "*.yaml"))
			if err != nil || len(files) == 0 {
				t.Skipf("corpus not here (%v)", err)
			}
			nodes := readFileNodes(t, files...)
			o, err := Order(nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Gates) != 1 || len(o.Warnings) != 0 {
				logSteps(t, nodes, o)
				t.Fatalf("%d steps, warnings %q: want the install alone in one step", len(o.Gates), o.Warnings)
			}
			t.Logf("%s: %d objects, one step", dir, len(nodes))
			if extra[dir] == "" {
				return
			}
			nodes = append(nodes, orderNodes(t, extra[dir])...)
			if o, err = Order(nodes, nil); err != nil {
				t.Fatal(err)
			}
			logSteps(t, nodes, o)
			last := len(nodes) - 1
			if o.Waves[last] != 1 || len(o.Gates) != 2 {
				t.Fatalf("%s is in step %d of %d, want 1 of 2", nodes[last].ID, o.Waves[last], len(o.Gates))
			}
			if g := o.Gates[1]; len(g.Ready) != 1 || g.Ready[0].Name != wantServer[dir] || len(g.Webhooks) != 1 || g.Webhooks[0].Probe != nodes[last].ID {
				t.Fatalf("gate %+v, want Ready %s and the webhook probed with %s", g, wantServer[dir], nodes[last].ID)
			}
		})
	}
}
