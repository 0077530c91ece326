package apply

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// withoutLiveAllocations returns body, a Service, without the node ports
// and cluster IPs it pins to values live holds, or nil when it pins none
// (or is no Service). While live exists, the dry run of the create is
// refused "provided port is already allocated" for them, although the
// delete frees them for the real create: the dry run asks again without
// them, and still refuses what another object holds or what is invalid.
func withoutLiveAllocations(body, live *unstructured.Unstructured) *unstructured.Unstructured {
	if body.GetAPIVersion() != "v1" || body.GetKind() != "Service" {
		return nil
	}
	out := body.DeepCopy()
	spec, _ := out.Object["spec"].(map[string]any)
	liveSpec, _ := live.Object["spec"].(map[string]any)
	if spec == nil || liveSpec == nil {
		return nil
	}
	held := liveNodePorts(liveSpec)
	changed := false
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		port, _ := p.(map[string]any)
		if n, ok := port["nodePort"]; ok && slices.Contains(held, fmt.Sprint(n)) {
			delete(port, "nodePort")
			changed = true
		}
	}
	for _, field := range []string{"healthCheckNodePort", "clusterIP", "clusterIPs"} {
		v, ok := spec[field]
		// "None" (headless) and "" allocate nothing.
		if ok && v != "None" && v != "" && fmt.Sprint(v) == fmt.Sprint(liveSpec[field]) {
			delete(spec, field)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return out
}

// liveNodePorts are the node ports of a live Service's ports, printed.
func liveNodePorts(liveSpec map[string]any) []string {
	ports, _ := liveSpec["ports"].([]any)
	var out []string
	for _, p := range ports {
		if port, ok := p.(map[string]any); ok && port["nodePort"] != nil {
			out = append(out, fmt.Sprint(port["nodePort"]))
		}
	}
	return out
}
