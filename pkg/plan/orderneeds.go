package plan

import "k8s.io/apimachinery/pkg/labels"

// What a webhook or APIService of the run needs to answer: its Service,
// the Deployments, StatefulSets and DaemonSets of the run whose pods that
// Service selects, and what those pods cannot start without (their
// namespace, ServiceAccount, ConfigMaps and Secrets, when in the run). A
// webhook that intercepts one of these is not waited for by it: the
// workload could never become ready (a warning instead of a deadlock).

// addServiceNeeds adds the Service ns/name of the run and what serves it.
func (o *orderer) addServiceNeeds(src *inferredSource, ns, name string) {
	o.addNeed(src, refKey{kind: "Namespace", name: ns})
	svc, ok := o.byRef[refKey{kind: "Service", namespace: ns, name: name}]
	if !ok {
		return
	}
	src.needs = append(src.needs, svc)
	selector := stringMap(nestedValue(o.nodes[svc].Object, "spec", "selector"))
	if len(selector) == 0 {
		return // endpoints managed by hand: no workload of the run to wait for
	}
	sel := labels.SelectorFromSet(selector)
	for i := range o.nodes {
		n := &o.nodes[i]
		if !isWorkload(n.ID) || n.ID.Namespace != ns {
			continue
		}
		podLabels := stringMap(nestedValue(n.Object, "spec", "template", "metadata", "labels"))
		if !sel.Matches(labels.Set(podLabels)) || contains(src.needs, i) {
			continue
		}
		src.needs = append(src.needs, i)
		src.workloads = append(src.workloads, i)
		for _, ref := range podTemplateRefs(n.Object, ns) {
			o.addNeed(src, ref)
		}
	}
}

func (o *orderer) addNeed(src *inferredSource, key refKey) {
	if i, ok := o.byRef[key]; ok && !contains(src.needs, i) {
		src.needs = append(src.needs, i)
	}
}

func isWorkload(id ID) bool {
	return id.Group == "apps" && (id.Kind == "Deployment" || id.Kind == "StatefulSet" || id.Kind == "DaemonSet")
}

// podTemplateRefs are the objects in namespace ns a workload's pods name:
// ServiceAccount, ConfigMaps and Secrets of volumes, env, envFrom and
// imagePullSecrets.
func podTemplateRefs(obj map[string]any, ns string) []refKey {
	spec, _ := nestedValue(obj, "spec", "template", "spec").(map[string]any)
	var refs []refKey
	add := func(kind string, name any) {
		if s, ok := name.(string); ok && s != "" {
			refs = append(refs, refKey{kind: kind, namespace: ns, name: s})
		}
	}
	add("ServiceAccount", spec["serviceAccountName"])
	for _, ps := range mapItems(spec["imagePullSecrets"]) {
		add("Secret", ps["name"])
	}
	for _, v := range mapItems(spec["volumes"]) {
		add("ConfigMap", nestedValue(v, "configMap", "name"))
		add("Secret", nestedValue(v, "secret", "secretName"))
		for _, p := range mapItems(nestedValue(v, "projected", "sources")) {
			add("ConfigMap", nestedValue(p, "configMap", "name"))
			add("Secret", nestedValue(p, "secret", "name"))
		}
	}
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range mapItems(spec[list]) {
			for _, e := range mapItems(c["env"]) {
				add("ConfigMap", nestedValue(e, "valueFrom", "configMapKeyRef", "name"))
				add("Secret", nestedValue(e, "valueFrom", "secretKeyRef", "name"))
			}
			for _, e := range mapItems(c["envFrom"]) {
				add("ConfigMap", nestedValue(e, "configMapRef", "name"))
				add("Secret", nestedValue(e, "secretRef", "name"))
			}
		}
	}
	return refs
}

// mapItems are the maps of a list (other entries skipped: bad input).
func mapItems(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func nestedValue(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}
