package plan

import (
	"reflect"
	"strings"
	"testing"
)

// hookServer is what a webhook of the tests calls: a Service in "sys"
// selecting the pods of Deployment hook, and a Deployment it does not select.
const hookServer = `
apiVersion: v1
kind: Service
metadata: {name: hook, namespace: sys}
spec: {selector: {app: hook}, ports: [{port: 443}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: hook, namespace: sys}
spec: {template: {metadata: {labels: {app: hook, tier: x}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: bystander, namespace: sys}
spec: {template: {metadata: {labels: {app: other}}}}
`

func guard(apiVersion, kind, fields string) string {
	return "apiVersion: " + apiVersion + "\nkind: " + kind + `
metadata: {name: guard}
webhooks:
- name: guard.example.com
  clientConfig: {service: {namespace: sys, name: hook}}
  sideEffects: None
  admissionReviewVersions: [v1]
` + indent(fields, "  ") + "\n"
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+by)
}

const configMapRule = "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps]}]"

// TestWebhookInterceptsAsTheAPIServer: each field of a webhook that decides
// whether it is called for an object, one case each way.
func TestWebhookInterceptsAsTheAPIServer(t *testing.T) {
	target := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: target, namespace: app, labels: {x: v}}\n"
	nsObject := func(labels string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: target, labels: {" + labels + "}}\n"
	}
	clusterRole := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: target}\n"
	teamA := func(string) map[string]string { return map[string]string{"team": "a"} }
	tests := []struct {
		name     string
		webhook  string
		target   string
		nsLabels func(string) map[string]string
		extra    string // more objects of the run
		want     bool
	}{
		{"rule matches", configMapRule, target, nil, "", true},
		{"operation DELETE only", "rules: [{operations: [DELETE], apiGroups: [''], apiVersions: [v1], resources: [configmaps]}]", target, nil, "", false},
		{"operation UPDATE", "rules: [{operations: [UPDATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps]}]", target, nil, "", true},
		{"operation *", "rules: [{operations: ['*'], apiGroups: [''], apiVersions: [v1], resources: [configmaps]}]", target, nil, "", true},
		{"other group", "rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [configmaps]}]", target, nil, "", false},
		{"group *", "rules: [{operations: [CREATE], apiGroups: ['*'], apiVersions: [v1], resources: [configmaps]}]", target, nil, "", true},
		{"other version, matchPolicy Equivalent (default)", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v2], resources: [configmaps]}]", target, nil, "", true},
		{"other version, matchPolicy Exact", "matchPolicy: Exact\nrules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v2], resources: [configmaps]}]", target, nil, "", false},
		{"version * Exact", "matchPolicy: Exact\nrules: [{operations: [CREATE], apiGroups: [''], apiVersions: ['*'], resources: [configmaps]}]", target, nil, "", true},
		{"other resource", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [secrets]}]", target, nil, "", false},
		{"resource *", "rules: [{operations: [CREATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]", target, nil, "", true},
		{"resource */*", "rules: [{operations: [CREATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*']}]", target, nil, "", true},
		{"resource configmaps/*", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps/*]}]", target, nil, "", true},
		{"subresource only */status", "rules: [{operations: [CREATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/status']}]", target, nil, "", false},
		{"scope Namespaced", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps], scope: Namespaced}]", target, nil, "", true},
		{"scope Cluster, namespaced object", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps], scope: Cluster}]", target, nil, "", false},
		{"scope Cluster, a Namespace", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [namespaces], scope: Cluster}]", nsObject(""), nil, "", true},
		{"scope Namespaced, a Namespace", "rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [namespaces], scope: Namespaced}]", nsObject(""), nil, "", false},
		{"namespaceSelector, labels from the caller", configMapRule + "\nnamespaceSelector: {matchLabels: {team: a}}", target, teamA, "", true},
		{"namespaceSelector, no labels known", configMapRule + "\nnamespaceSelector: {matchLabels: {team: a}}", target, nil, "", false},
		{"namespaceSelector, labels of the run's Namespace", configMapRule + "\nnamespaceSelector: {matchLabels: {team: a}}", target, nil,
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {team: a}}\n", true},
		{"namespaceSelector on metadata.name", configMapRule + "\nnamespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [app]}]}", target, nil, "", false},
		{"namespaceSelector, a Namespace by its own labels",
			"rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [namespaces]}]\nnamespaceSelector: {matchExpressions: [{key: ignore, operator: DoesNotExist}]}",
			nsObject("ignore: 'yes'"), nil, "", false},
		{"namespaceSelector, a Namespace without the label",
			"rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [namespaces]}]\nnamespaceSelector: {matchExpressions: [{key: ignore, operator: DoesNotExist}]}",
			nsObject(""), nil, "", true},
		{"namespaceSelector does not exempt a cluster-scoped object",
			"rules: [{operations: [CREATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]\nnamespaceSelector: {matchLabels: {team: a}}",
			clusterRole, nil, "", true},
		{"objectSelector matches", configMapRule + "\nobjectSelector: {matchLabels: {x: v}}", target, nil, "", true},
		{"objectSelector does not", configMapRule + "\nobjectSelector: {matchLabels: {x: z}}", target, nil, "", false},
		{"failurePolicy Ignore", configMapRule + "\nfailurePolicy: Ignore", target, nil, "", false},
		{"failurePolicy Fail", configMapRule + "\nfailurePolicy: Fail", target, nil, "", true},
		{"matchConditions count as matching", configMapRule + "\nmatchConditions: [{name: never, expression: 'false'}]", target, nil, "", true},
		{"no webhook for admission configurations",
			"rules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]",
			"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: target}\n", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := guard("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", tt.webhook) + "---\n" + tt.target
			if tt.extra != "" {
				stream += "---\n" + tt.extra
			}
			nodes := orderNodes(t, stream)
			o, err := Order(nodes, tt.nsLabels)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Waves[1] > o.Waves[0]; got != tt.want {
				logSteps(t, nodes, o)
				t.Fatalf("intercepted = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWebhookV1beta1DefaultsToIgnore(t *testing.T) {
	nodes := orderNodes(t, guard("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", configMapRule)+
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: target, namespace: app}\n")
	o, err := Order(nodes, nil)
	if err != nil || o.Waves[1] != 0 {
		t.Fatalf("got %+v, %v", o, err)
	}
}

// TestWebhookGoesBeforeWhatItAdmits: the configuration, its Service and
// the Deployment serving it come first; the step of what it admits waits
// for that Deployment and for the webhook to answer (probed with an
// object it intercepts).
func TestWebhookGoesBeforeWhatItAdmits(t *testing.T) {
	nodes := orderNodes(t, guard("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", configMapRule)+"---"+hookServer+`---
apiVersion: v1
kind: ConfigMap
metadata: {name: first, namespace: app}
---
apiVersion: v1
kind: Secret
metadata: {name: untouched, namespace: app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: second, namespace: app}
`)
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if want := []int{0, 0, 0, 0, 1, 0, 1}; !reflect.DeepEqual(o.Waves, want) {
		t.Fatalf("waves %v, want %v", o.Waves, want)
	}
	want := Gate{
		Ready:    []ID{nodes[2].ID},
		Webhooks: []WebhookGate{{Configuration: nodes[0].ID, Webhook: "guard.example.com", Probe: nodes[4].ID}},
	}
	if !reflect.DeepEqual(o.Gates, []Gate{{}, want}) {
		t.Fatalf("gates %+v\nwant %+v", o.Gates, want)
	}
	if o.Reasons[4] != "after webhook mutating/guard (guard.example.com)" {
		t.Fatalf("reason %q", o.Reasons[4])
	}
}

// TestWebhookDoesNotWaitForWhatItNeeds: a webhook that would intercept its
// own Deployment cannot be waited for by it: a warning, no order for it;
// another Deployment goes after.
func TestWebhookDoesNotWaitForWhatItNeeds(t *testing.T) {
	nodes := orderNodes(t, guard("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
		"rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]")+"---"+hookServer)
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if want := []int{0, 0, 0, 1}; !reflect.DeepEqual(o.Waves, want) {
		t.Fatalf("waves %v, want %v", o.Waves, want)
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "intercepts Deployment.apps/hook -n sys, which it needs to answer") {
		t.Fatalf("warnings %q", o.Warnings)
	}
}

// TestWebhooksThatNeedEachOtherFallBack: two webhooks each intercepting the
// other's Deployment is an inferred cycle: a warning, the declared order.
func TestWebhooksThatNeedEachOtherFallBack(t *testing.T) {
	half := func(me, other string) string {
		return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: ` + me + `}
webhooks:
- name: ` + me + `.example.com
  clientConfig: {service: {namespace: sys, name: ` + me + `}}
  rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
  objectSelector: {matchLabels: {app: ` + other + `}}
---
apiVersion: v1
kind: Service
metadata: {name: ` + me + `, namespace: sys}
spec: {selector: {app: ` + me + `}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + me + `, namespace: sys, labels: {app: ` + me + `}}
spec: {template: {metadata: {labels: {app: ` + me + `}}}}
`
	}
	nodes := orderNodes(t, half("a", "b")+"---\n"+half("b", "a"))
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if !reflect.DeepEqual(o.Waves, make([]int, len(nodes))) || len(o.Gates) != 1 {
		t.Fatalf("waves %v gates %d, want one step", o.Waves, len(o.Gates))
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "inferred order cycle Deployment.apps/a -n sys → Deployment.apps/b -n sys → Deployment.apps/a -n sys") {
		t.Fatalf("warnings %q", o.Warnings)
	}
}

// TestWebhookRespectsDeclaredWaves: inference never moves an object
// across declared waves: a webhook declared after what it intercepts is a
// warning; one declared before gates the later wave.
func TestWebhookRespectsDeclaredWaves(t *testing.T) {
	wave := func(stream, w string) string {
		return strings.ReplaceAll(stream, "metadata: {name:", "metadata: {annotations: {argocd.argoproj.io/sync-wave: '"+w+"'}, name:")
	}
	target := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: target, namespace: app}\n"
	server := guard("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", configMapRule) + "---" + hookServer

	later := orderNodes(t, wave(server, "1")+target)
	o, err := Order(later, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, later, o)
	if o.Waves[4] != 0 || o.Waves[0] != 1 || len(o.Warnings) != 1 ||
		!strings.Contains(o.Warnings[0], "is in a later sync-wave than 1 object(s) it intercepts (first: ConfigMap/target -n app)") {
		t.Fatalf("waves %v warnings %q", o.Waves, o.Warnings)
	}

	earlier := orderNodes(t, wave(server, "-1")+target)
	if o, err = Order(earlier, nil); err != nil {
		t.Fatal(err)
	}
	logSteps(t, earlier, o)
	if o.Waves[4] != 1 || len(o.Gates[1].Webhooks) != 1 || o.Gates[1].Webhooks[0].Probe != earlier[4].ID {
		t.Fatalf("waves %v gates %+v", o.Waves, o.Gates)
	}
}

// TestAPIServiceGoesBeforeItsKinds: objects of an APIService's group and
// version wait for it to be Available; other versions do not.
func TestAPIServiceGoesBeforeItsKinds(t *testing.T) {
	nodes := orderNodes(t, `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.example.com}
spec: {group: metrics.example.com, version: v1beta1, service: {namespace: sys, name: hook}, groupPriorityMinimum: 100, versionPriority: 100}
---`+hookServer+`---
apiVersion: metrics.example.com/v1beta1
kind: Metric
metadata: {name: m, namespace: app}
---
apiVersion: metrics.example.com/v1
kind: Metric
metadata: {name: other-version, namespace: app}
`)
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if want := []int{0, 0, 0, 0, 1, 0}; !reflect.DeepEqual(o.Waves, want) {
		t.Fatalf("waves %v, want %v", o.Waves, want)
	}
	want := Gate{Ready: []ID{nodes[2].ID}, APIServices: []ID{nodes[0].ID}}
	if !reflect.DeepEqual(o.Gates[1], want) || o.Reasons[4] != "after apiservice v1beta1.metrics.example.com" {
		t.Fatalf("gate %+v reason %q", o.Gates[1], o.Reasons[4])
	}
}

// TestWebhookBadConfigurationIsAWarning: a configuration Order cannot read
// orders nothing; it never panics.
func TestWebhookBadConfigurationIsAWarning(t *testing.T) {
	nodes := orderNodes(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: broken}
webhooks:
- name: a
  rules: "not a list"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: badselector}
webhooks:
- name: b
  namespaceSelector: {matchExpressions: [{key: k, operator: Bogus}]}
`)
	o, err := Order(nodes, nil)
	if err != nil || len(o.Warnings) != 2 {
		t.Fatalf("got %+v, %v", o, err)
	}
	t.Log(o.Warnings)
}

// TestWebhookDoesNotHoldWhatItsPodsNeed: a webhook intercepting every
// core object would hold back its own Deployment's namespace,
// ServiceAccount, ConfigMap and Secret, which the pods need to start: a
// warning each, not ordered; the same kinds elsewhere wait for it.
func TestWebhookDoesNotHoldWhatItsPodsNeed(t *testing.T) {
	nodes := orderNodes(t, guard("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
		"rules: [{operations: [CREATE], apiGroups: [''], apiVersions: ['*'], resources: ['*']}]")+`---
apiVersion: v1
kind: Namespace
metadata: {name: sys}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: hook, namespace: sys}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hook-config, namespace: sys}
---
apiVersion: v1
kind: Secret
metadata: {name: hook-tls, namespace: sys}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: hook, namespace: sys}
spec:
  template:
    metadata: {labels: {app: hook}}
    spec:
      serviceAccountName: hook
      volumes: [{name: c, configMap: {name: hook-config}}]
      containers: [{name: c, env: [{name: K, valueFrom: {secretKeyRef: {name: hook-tls, key: k}}}]}]
---
apiVersion: v1
kind: Service
metadata: {name: hook, namespace: sys}
spec: {selector: {app: hook}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: elsewhere, namespace: app}
`)
	o, err := Order(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, nodes, o)
	if want := []int{0, 0, 0, 0, 0, 0, 0, 1}; !reflect.DeepEqual(o.Waves, want) {
		t.Fatalf("waves %v, want %v", o.Waves, want)
	}
	// Namespace, ServiceAccount, ConfigMap, Secret and the Service itself.
	if len(o.Warnings) != 5 {
		t.Fatalf("warnings %q", o.Warnings)
	}
}
