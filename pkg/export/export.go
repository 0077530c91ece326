package export

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serverMetadata is what the API server sets in metadata; a config file
// never declares it.
var serverMetadata = fieldpath.ServerMetadata(fieldpath.EveryWrite | fieldpath.OnCreate | fieldpath.OnDelete)

// serverAnnotations are annotations the server or kubectl writes: the
// last-applied records and the Deployment controller's revision.
var serverAnnotations = append(slices.Clone(fieldpath.RecordAnnotations), "deployment.kubernetes.io/revision")

// Export returns live as a clean configuration file: no status, no metadata
// the server sets, no last-applied record, no nulls, and the server defaults
// kapply knows (see defaultsOf) dropped where the value equals the default.
// notes name what may still be a default the server filled in: fields that
// are defaulted but whose value kapply cannot tell from a choice, and kinds
// it has no table for. live is not modified.
func Export(live *unstructured.Unstructured) (*unstructured.Unstructured, []string) {
	out := live.DeepCopy()
	delete(out.Object, "status")
	cleanMetadata(out.Object)
	gk := out.GroupVersionKind().GroupKind()
	rules, known := defaultsOf(gk)
	for _, r := range rules {
		r.drop(out.Object)
	}
	out.Object = dropNulls(out.Object).(map[string]any)
	return out, exportNotes(out, gk, known)
}

func cleanMetadata(obj map[string]any) {
	metadata, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range serverMetadata {
		delete(metadata, k)
	}
	annotations, ok := metadata["annotations"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range serverAnnotations {
		delete(annotations, k)
	}
	if len(annotations) == 0 {
		delete(metadata, "annotations")
	}
}

// dropNulls removes null fields, which in a file mean "delete".
func dropNulls(v any) any {
	switch c := v.(type) {
	case map[string]any:
		for k, item := range c {
			if item == nil {
				delete(c, k)
				continue
			}
			c[k] = dropNulls(item)
		}
	case []any:
		for i, item := range c {
			c[i] = dropNulls(item)
		}
	}
	return v
}

// defaultRule drops the field at path (a "*" step: every list element) when
// isDefault says its value is the server's default; parent is the map
// holding it.
type defaultRule struct {
	path      string
	isDefault func(value any, parent map[string]any) bool
}

func (r defaultRule) drop(obj map[string]any) {
	steps := strings.Split(r.path, ".")
	forEachParent(obj, steps[:len(steps)-1], func(parent map[string]any) {
		key := steps[len(steps)-1]
		if v, ok := parent[key]; ok && r.isDefault(v, parent) {
			delete(parent, key)
		}
	})
}

// forEachParent calls fn with every map the steps lead to.
func forEachParent(v any, steps []string, fn func(map[string]any)) {
	if len(steps) == 0 {
		if m, ok := v.(map[string]any); ok {
			fn(m)
		}
		return
	}
	if steps[0] == "*" {
		list, _ := v.([]any)
		for _, item := range list {
			forEachParent(item, steps[1:], fn)
		}
		return
	}
	if m, ok := v.(map[string]any); ok {
		forEachParent(m[steps[0]], steps[1:], fn)
	}
}

// equals is a rule for a fixed default value.
func equals(path string, want any) defaultRule {
	return defaultRule{path: path, isDefault: func(v any, _ map[string]any) bool {
		return fieldpath.Equal(v, want)
	}}
}

// always drops a field the server allocates (a cluster IP).
func always(path string) defaultRule {
	return defaultRule{path: path, isDefault: func(any, map[string]any) bool { return true }}
}

// podSpecAt is where each workload kind keeps its pod spec.
var podSpecAt = map[schema.GroupKind]string{
	{Kind: "Pod"}:                        "spec",
	{Kind: "ReplicationController"}:      "spec.template.spec",
	{Group: "apps", Kind: "Deployment"}:  "spec.template.spec",
	{Group: "apps", Kind: "ReplicaSet"}:  "spec.template.spec",
	{Group: "apps", Kind: "StatefulSet"}: "spec.template.spec",
	{Group: "apps", Kind: "DaemonSet"}:   "spec.template.spec",
	{Group: "batch", Kind: "Job"}:        "spec.template.spec",
	{Group: "batch", Kind: "CronJob"}:    "spec.jobTemplate.spec.template.spec",
}

// kindDefaults are the server defaults of a kind outside its pod spec.
var kindDefaults = map[schema.GroupKind][]defaultRule{
	{Group: "apps", Kind: "Deployment"}: {
		equals("spec.progressDeadlineSeconds", 600),
		equals("spec.revisionHistoryLimit", 10),
		equals("spec.strategy", map[string]any{"type": "RollingUpdate",
			"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}}),
	},
	{Group: "apps", Kind: "StatefulSet"}: {
		equals("spec.podManagementPolicy", "OrderedReady"),
		equals("spec.revisionHistoryLimit", 10),
		equals("spec.updateStrategy", map[string]any{"type": "RollingUpdate",
			"rollingUpdate": map[string]any{"partition": 0}}),
		equals("spec.persistentVolumeClaimRetentionPolicy", map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"}),
	},
	{Group: "apps", Kind: "DaemonSet"}: {
		equals("spec.revisionHistoryLimit", 10),
		equals("spec.updateStrategy", map[string]any{"type": "RollingUpdate",
			"rollingUpdate": map[string]any{"maxSurge": 0, "maxUnavailable": 1}}),
	},
	{Kind: "Service"}: {
		equals("spec.sessionAffinity", "None"),
		equals("spec.type", "ClusterIP"),
		always("spec.clusterIP"),
		always("spec.clusterIPs"),
		always("spec.ipFamilies"),
		equals("spec.ipFamilyPolicy", "SingleStack"),
		equals("spec.internalTrafficPolicy", "Cluster"),
		equals("spec.ports.*.protocol", "TCP"),
		{path: "spec.ports.*.targetPort", isDefault: func(v any, port map[string]any) bool {
			return fieldpath.Equal(v, port["port"])
		}},
	},
}

// podSpecDefaults are the defaults of a pod spec, relative to it.
var podSpecDefaults = []defaultRule{
	equals("dnsPolicy", "ClusterFirst"),
	equals("restartPolicy", "Always"),
	equals("schedulerName", "default-scheduler"),
	equals("securityContext", map[string]any{}),
	equals("terminationGracePeriodSeconds", 30),
	equals("enableServiceLinks", true),
	equals("preemptionPolicy", "PreemptLowerPriority"),
	equals("priority", 0),
}

// containerDefaults are the defaults of a container, relative to it.
var containerDefaults = []defaultRule{
	equals("terminationMessagePath", "/dev/termination-log"),
	equals("terminationMessagePolicy", "File"),
	equals("resources", map[string]any{}),
	equals("ports.*.protocol", "TCP"),
	{path: "imagePullPolicy", isDefault: func(v any, c map[string]any) bool {
		image, _ := c["image"].(string)
		return v == defaultPullPolicy(image)
	}},
}

// defaultPullPolicy is the server's default: Always for the latest tag or
// none, IfNotPresent for any other tag or a digest.
func defaultPullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, tagged := strings.Cut(name, ":")
	if !tagged || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// defaultsOf returns the rules of a kind, and whether kapply has a table
// for it at all.
func defaultsOf(gk schema.GroupKind) ([]defaultRule, bool) {
	rules := kindDefaults[gk]
	at, workload := podSpecAt[gk]
	if workload && at != "" {
		rules = append(append([]defaultRule{}, rules...), under(at, podSpecDefaults)...)
		for _, list := range []string{"containers", "initContainers"} {
			rules = append(rules, under(at+"."+list+".*", containerDefaults)...)
		}
	}
	_, hasKindRules := kindDefaults[gk]
	return rules, hasKindRules || workload || simpleKinds[gk]
}

// simpleKinds have no server defaults worth a table.
var simpleKinds = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}: true, {Kind: "Secret"}: true, {Kind: "Namespace"}: true, {Kind: "ServiceAccount"}: true,
}

func under(prefix string, rules []defaultRule) []defaultRule {
	out := make([]defaultRule, len(rules))
	for i, r := range rules {
		out[i] = defaultRule{path: prefix + "." + r.path, isDefault: r.isDefault}
	}
	return out
}

// maybeDefaults are fields the server may have filled in but whose value
// can as well be a choice; Export keeps them and notes them.
var maybeDefaults = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:  {"spec.replicas"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec.replicas"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec.replicas"},
	{Kind: "Service"}:                    {"spec.ports.*.nodePort", "spec.externalTrafficPolicy", "spec.allocateLoadBalancerNodePorts"},
	{Kind: "Pod"}:                        {"spec.tolerations", "spec.serviceAccountName", "spec.serviceAccount", "spec.volumes", "spec.nodeName"},
	{Kind: "Secret"}:                     {"type"},
	{Group: "batch", Kind: "Job"}:        {"spec.selector", "spec.template.metadata.labels", "spec.backoffLimit", "spec.completions", "spec.parallelism", "spec.completionMode", "spec.suspend", "spec.podReplacementPolicy"},
}

// exportNotes lists the kept fields that may be defaults.
func exportNotes(obj *unstructured.Unstructured, gk schema.GroupKind, known bool) []string {
	name := strings.ToLower(gk.Kind) + "/" + obj.GetName()
	if !known {
		return []string{fmt.Sprintf("%s: kapply has no table of server defaults for kind %s; fields the server defaulted are kept", name, gk.Kind)}
	}
	var kept []string
	for _, path := range maybeDefaults[gk] {
		steps := strings.Split(path, ".")
		forEachParent(obj.Object, steps[:len(steps)-1], func(parent map[string]any) {
			if v, ok := parent[steps[len(steps)-1]]; ok {
				kept = append(kept, describeKept(path, v))
			}
		})
	}
	sort.Strings(kept)
	if len(kept) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: kept fields that may be server defaults: %s", name, strings.Join(kept, ", "))}
}

func describeKept(path string, v any) string {
	switch v.(type) {
	case map[string]any, []any:
		return path
	}
	return fmt.Sprintf("%s=%v", path, v)
}
