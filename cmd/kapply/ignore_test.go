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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"

	"github.com/kapply/kapply/internal/testcluster"
)

const ignoreWeb = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web, team: a}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1.27"}
      - {name: sidecar, image: "busybox:1"}
`

// ignoreScenario applies ignoreWeb, then three writers change it: an
// autoscaler ("hpa-controller", scale subresource) the replicas, a mesh
// ("mesh-injector") the sidecar's image, kubectl edit the team label.
func ignoreScenario(t *testing.T) (dir, ns string) {
	t.Helper()
	ns = cluster.Namespace(t)
	dir = writeFiles(t, map[string]string{"web.yaml": ignoreWeb})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	patch := func(manager, subresource string, pt types.PatchType, body string) {
		t.Helper()
		var sub []string
		if subresource != "" {
			sub = []string{subresource}
		}
		_, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", pt, []byte(body), metav1.PatchOptions{FieldManager: manager}, sub...)
		if err != nil {
			t.Fatalf("patching as %s: %v", manager, err)
		}
	}
	patch("hpa-controller", "scale", types.MergePatchType, `{"spec":{"replicas":4}}`)
	patch("mesh-injector", "", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:2"}]}}}}`)
	patch("kubectl-edit", "", types.MergePatchType, `{"metadata":{"labels":{"team":"x"}}}`)
	return dir, ns
}

// The three rules of TestIgnoreRules*, one per kind of rule.
var ignoreRuleFlags = map[string]string{
	"pointer": "kind=Deployment,pointer=/metadata/labels/team",
	"jq":      `group=apps,kind=Deployment,name=w*,jq=.spec.template.spec.containers[] | select(.name == "sidecar") | .image`,
	"manager": "manager=hpa-controller",
}

// What each rule's field looks like in diff's and status's output.
var ignoredFieldText = map[string]struct{ diff, status string }{
	"pointer": {"team: x", "metadata.labels.team"},
	"jq":      {"busybox:2", "containers[name=sidecar].image"},
	"manager": {"replicas: 4", "spec.replicas"},
}

func TestIgnoreRulesDiff(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := ignoreScenario(t)
	r := kapply(t, "diff", "-f", dir, "-n", ns)
	if r.code != 1 {
		t.Fatalf("diff without rules: exit %d, want 1: %s", r.code, r.stderr)
	}
	for name, text := range ignoredFieldText {
		if !strings.Contains(r.stdout, text.diff) {
			t.Errorf("diff without rules lacks %s's field %q:\n%s", name, text.diff, r.stdout)
		}
	}
	var all []string
	for name, rule := range ignoreRuleFlags {
		all = append(all, "--ignore", rule)
		r := kapply(t, "diff", "-f", dir, "-n", ns, "--ignore", rule)
		if r.code != 1 {
			t.Errorf("diff --ignore %s: exit %d, want 1 (the other fields differ): %s", rule, r.code, r.stderr)
		}
		for other, text := range ignoredFieldText {
			if shown := strings.Contains(r.stdout, text.diff); shown == (other == name) {
				t.Errorf("diff --ignore %s: shows %q: %t, want %t:\n%s", rule, text.diff, shown, other != name, r.stdout)
			}
		}
	}
	r = kapply(t, append([]string{"diff", "-f", dir, "-n", ns}, all...)...)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("diff with every rule: exit %d, want 0 and no output:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A real change still shows, and still exits 1.
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
	r = kapply(t, append([]string{"diff", "-f", dir, "-n", ns, "--explain"}, all...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "+      - image: nginx:1.28") {
		t.Errorf("diff with every rule and a new image: exit %d, want 1 and the image:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "replicas") || strings.Contains(r.stdout, "matched nothing") {
		t.Errorf("--explain with rules shows an ignored field or calls a matching rule unmatched:\n%s", r.stdout)
	}
}

func TestIgnoreRulesStatus(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := ignoreScenario(t)
	r := kapply(t, "status", "-f", dir, "-n", ns)
	if r.code != 1 {
		t.Fatalf("status without rules: exit %d, want 1: %s%s", r.code, r.stdout, r.stderr)
	}
	for name, text := range ignoredFieldText {
		if !strings.Contains(r.stdout, text.status) {
			t.Errorf("status without rules lacks %s's field %q:\n%s", name, text.status, r.stdout)
		}
	}
	var all []string
	for name, rule := range ignoreRuleFlags {
		all = append(all, "--ignore", rule)
		r := kapply(t, "status", "-f", dir, "-n", ns, "--ignore", rule)
		if r.code != 1 {
			t.Errorf("status --ignore %s: exit %d, want 1: %s", rule, r.code, r.stderr)
		}
		for other, text := range ignoredFieldText {
			if shown := strings.Contains(r.stdout, text.status); shown == (other == name) {
				t.Errorf("status --ignore %s: shows %q: %t, want %t:\n%s", rule, text.status, shown, other != name, r.stdout)
			}
		}
	}
	r = kapply(t, append([]string{"status", "-f", dir, "-n", ns}, all...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "in step with the last apply") {
		t.Errorf("status with every rule: exit %d, want 0, in step:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestIgnoreRulesApplyRespect(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := ignoreScenario(t)
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	// The pointer from a file, the others from flags.
	if err := os.WriteFile(rules, []byte("apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n- kind: Deployment\n  jsonPointers: [/metadata/labels/team]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--ignore-file", rules, "--ignore", ignoreRuleFlags["jq"], "--ignore", ignoreRuleFlags["manager"])
	if r.code != 2 || !strings.Contains(r.stderr, "--respect-ignore") {
		t.Errorf("apply with rules without --respect-ignore: exit %d, want 2 naming --respect-ignore: %s", r.code, r.stderr)
	}
	r = kapply(t, "apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore-file", rules, "--ignore", ignoreRuleFlags["jq"], "--ignore", ignoreRuleFlags["manager"])
	if r.code != 0 {
		t.Fatalf("apply --respect-ignore: exit %d: %s", r.code, r.stderr)
	}
	live, err := dynClient(t).Resource(deployments).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers := live.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	images := map[string]any{}
	for _, c := range containers {
		images[c.(map[string]any)["name"].(string)] = c.(map[string]any)["image"]
	}
	replicas := live.Object["spec"].(map[string]any)["replicas"]
	if got := fmt.Sprint(live.GetLabels()["team"], " ", replicas, " ", images["sidecar"], " ", images["web"]); got != "x 4 busybox:2 nginx:1.28" {
		t.Errorf("after apply --respect-ignore: team, replicas, sidecar, web = %s; want x 4 busybox:2 nginx:1.28 (ignored fields as live, the file's change applied)", got)
	}
}

func TestIgnoreMalformedRuleNamesFileLine(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb, "rules.yaml": "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n- kind: Deployment\n  jsonPointers: [/spec/replicas]\n- kind: Service\n  jqPathExpression: ['.spec']\n"})
	rules := filepath.Join(dir, "rules.yaml")
	web := filepath.Join(dir, "web.yaml")
	for _, args := range [][]string{
		{"diff", "-f", web, "-n", ns, "--ignore-file", rules},
		{"status", "-f", web, "-n", ns, "--ignore-file", rules},
		{"apply", "-f", web, "-n", ns, "--respect-ignore", "--ignore-file", rules},
	} {
		r := kapply(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, rules+":7:") || !strings.Contains(r.stderr, "jqPathExpression") {
			t.Errorf("%s with a misspelt key on line 7: exit %d, want 2 and %s:7 named: %s", args[0], r.code, rules, r.stderr)
		}
	}
	r := kapply(t, "diff", "-f", web, "-n", ns, "--ignore", "kind=Deployment,pointr=/spec/replicas")
	if r.code != 2 || !strings.Contains(r.stderr, "--ignore #1") {
		t.Errorf("diff with a bad --ignore: exit %d, want 2 naming the flag: %s", r.code, r.stderr)
	}
	// A rule that matches nothing is said under --explain.
	if r := kapply(t, "apply", "-f", web, "-n", ns); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
	r = kapply(t, "diff", "-f", web, "-n", ns, "--explain", "--ignore", "kind=Service,pointer=/spec/clusterIP", "--ignore", "kind=Deployment,pointer=/spec/replicas")
	if r.code != 1 || !strings.Contains(r.stdout, `# ignore rule --ignore #1 ("kind=Service,pointer=/spec/clusterIP") matched nothing`) || strings.Contains(r.stdout, "--ignore #2") {
		t.Errorf("diff --explain: exit %d, want 1 and only rule #1 reported unmatched:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// mutatingPolicyVersion is the served version of admissionregistration's
// MutatingAdmissionPolicy, "" when none is.
func mutatingPolicyVersion(t *testing.T) string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v1beta1", "v1alpha1"} {
		list, err := dc.ServerResourcesForGroupVersion("admissionregistration.k8s.io/" + v)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == "mutatingadmissionpolicies" {
				return v
			}
		}
	}
	return ""
}

// injectLabelPolicy installs a MutatingAdmissionPolicy that labels every
// Deployment written in ns injected=yes, and waits until the server's
// dry runs show it.
func injectLabelPolicy(t *testing.T, ns string) {
	t.Helper()
	version := mutatingPolicyVersion(t)
	if version == "" {
		t.Skip("the API server serves no MutatingAdmissionPolicy")
	}
	name := "inject-" + ns
	policy := fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/%[1]s
kind: MutatingAdmissionPolicy
metadata: {name: %[2]s}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[3]s}}
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"injected": "yes"}}}'
---
apiVersion: admissionregistration.k8s.io/%[1]s
kind: MutatingAdmissionPolicyBinding
metadata: {name: %[2]s}
spec: {policyName: %[2]s}
`, version, name, ns)
	dir := writeFiles(t, map[string]string{"policy.yaml": policy})
	if r := kapply(t, "apply", "-f", dir); r.code != 0 {
		t.Fatalf("installing the policy: %s", r.stderr)
	}
	t.Cleanup(func() {
		for _, res := range []string{"mutatingadmissionpolicybindings", "mutatingadmissionpolicies"} {
			gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: version, Resource: res}
			if err := dynClient(t).Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting %s %s: %v", res, name, err)
			}
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		probe, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"probe":"1"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && probe.GetLabels()["injected"] == "yes" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy did not take effect in 2 minutes (last error %v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestExplainNoiseAndSuggestIgnore: a mutating admission policy, a
// server default and an autoscaler make noise; --explain names each cause,
// --suggest-ignore's rules silence it, and a real change still shows.
func TestExplainNoiseAndSuggestIgnore(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	if _, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "hpa-controller"}, "scale"); err != nil {
		t.Fatal(err)
	}
	injectLabelPolicy(t, ns)
	// The file now says what live holds already (the default history
	// limit): only its record changes, and the dry run of that patch
	// meets the policy.
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "  replicas: 2\n", "  replicas: 2\n  revisionHistoryLimit: 10\n", 1))
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--explain")
	for _, want := range []string{"#   metadata.labels.injected: server: admission", "#   spec.replicas: other writer: hpa-controller"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("diff --explain: exit %d, want 1 and %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = kapply(t, "diff", "-f", dir, "-n", ns, "--suggest-ignore")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\n") {
		t.Fatalf("diff --suggest-ignore: exit %d, want 1 and a rules file:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"- /metadata/labels/injected", "- hpa-controller", "name: web"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("suggested rules lack %q:\n%s", want, r.stdout)
		}
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	r = kapply(t, "diff", "-f", dir, "-n", ns, "--ignore-file", rules)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("diff with the suggested rules: exit %d, want 0 and nothing:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A real change: a new port, whose protocol the server defaults.
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, `image: "nginx:1.27"}`, `image: "nginx:1.27", ports: [{containerPort: 8080}]}`, 1))
	r = kapply(t, "diff", "-f", dir, "-n", ns, "--ignore-file", rules, "--explain")
	if r.code != 1 || !strings.Contains(r.stdout, "containerPort: 8080") {
		t.Errorf("diff with the rules and a new port: exit %d, want 1 and the port:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"ports[containerPort=8080].protocol: server: defaulted", "ports[containerPort=8080].containerPort: (none) -> 8080  (set by file)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("diff --explain lacks %q:\n%s", want, r.stdout)
		}
	}
}
