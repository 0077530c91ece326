package ignore

import (
	"fmt"
	"strings"
)

// ParseFlag reads one --ignore value: comma-separated key=value pairs,
//
//	group=apps,kind=Deployment,namespace=prod,name=web-*,pointer=/spec/replicas
//	kind=Deployment,manager=hpa-controller
//	kind=Deployment,jq=.spec.template.spec.containers[] | select(.name == "istio-proxy")
//
// pointer and manager may repeat; jq takes the rest of the value, commas
// included (a jq expression may hold commas), so it comes last. group=
// with no value is the core group. n numbers the flag in messages.
func ParseFlag(value string, n int) (*Rule, error) {
	r := &Rule{Origin: fmt.Sprintf("--ignore #%d (%q)", n, value)}
	rest := value
	for rest != "" {
		var pair string
		if strings.HasPrefix(rest, "jq=") {
			pair, rest = rest, ""
		} else {
			pair, rest, _ = strings.Cut(rest, ",")
		}
		key, val, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not key=value (keys: group, kind, namespace, name, pointer, jq, manager)", r.Origin, pair)
		}
		if err := r.setFlagKey(strings.TrimSpace(key), val); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Origin, err)
		}
	}
	if err := r.compile(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Origin, err)
	}
	return r, nil
}

func (r *Rule) setFlagKey(key, val string) error {
	switch key {
	case "group":
		r.Group = &val
	case "kind":
		r.Kind = val
	case "namespace":
		r.Namespace = val
	case "name":
		r.Name = val
	case "pointer":
		r.JSONPointers = append(r.JSONPointers, val)
	case "jq":
		r.JQPathExpressions = append(r.JQPathExpressions, val)
	case "manager":
		r.ManagedFieldsManagers = append(r.ManagedFieldsManagers, val)
	default:
		return fmt.Errorf("unknown key %q (keys: group, kind, namespace, name, pointer, jq, manager)", key)
	}
	return nil
}
