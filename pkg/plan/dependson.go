package plan

import (
	"fmt"
	"strings"
)

// DependsOnAnnotation declares objects of the run that must be ready before
// this one is sent (cli-utils' and Config Sync's syntax).
const DependsOnAnnotation = "config.kubernetes.io/depends-on"

// DependsOnRef is one object named by a depends-on annotation: no version,
// an empty Group for the core group, a Namespace only for namespaced objects.
type DependsOnRef struct {
	Group, Kind, Namespace, Name string
}

// String spells the reference as the annotation does:
// <group>/<kind>/<name> or <group>/namespaces/<namespace>/<kind>/<name>.
func (r DependsOnRef) String() string {
	if r.Namespace != "" {
		return r.Group + "/namespaces/" + r.Namespace + "/" + r.Kind + "/" + r.Name
	}
	return r.Group + "/" + r.Kind + "/" + r.Name
}

// ParseDependsOn reads a depends-on annotation value: references separated
// by ',', each trimmed of surrounding white space. It accepts exactly what
// cli-utils' dependson.ParseDependencySet accepts (tested differentially),
// written here because that package pulls kustomize's kyaml into the binary.
// Like cli-utils it does not check that kind and name are non-empty: such a
// reference names no object of the run, which Order refuses.
func ParseDependsOn(value string) ([]DependsOnRef, error) {
	parts := strings.Split(value, ",")
	refs := make([]DependsOnRef, 0, len(parts))
	for i, part := range parts {
		ref, err := parseDependsOnRef(part)
		if err != nil {
			return nil, fmt.Errorf("reading reference %d of %s: %w", i, DependsOnAnnotation, err)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func parseDependsOnRef(s string) (DependsOnRef, error) {
	s = strings.TrimSpace(s)
	fields := strings.Split(s, "/")
	switch len(fields) {
	case 3:
		return DependsOnRef{Group: fields[0], Kind: fields[1], Name: fields[2]}, nil
	case 5:
		if fields[1] != "namespaces" {
			return DependsOnRef{}, fmt.Errorf(`%q: the second of 5 fields must be "namespaces"`, s)
		}
		return DependsOnRef{Group: fields[0], Namespace: fields[2], Kind: fields[3], Name: fields[4]}, nil
	default:
		return DependsOnRef{}, fmt.Errorf("%q: expected <group>/<kind>/<name> or "+
			"<group>/namespaces/<namespace>/<kind>/<name>, found %d fields", s, len(fields))
	}
}
