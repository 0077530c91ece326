package schema

import (
	"fmt"
	"sort"
	"strings"
)

// checkRefs reports the first $ref (in component-name order) that does not
// name a component of the document.
func checkRefs(schemas map[string]*rawSchema) error {
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := walkRefs(schemas[name], func(ref string) error { return refExists(schemas, ref) }); err != nil {
			return fmt.Errorf("component %s: %w", name, err)
		}
	}
	return nil
}

func refExists(schemas map[string]*rawSchema, ref string) error {
	if !strings.HasPrefix(ref, componentPrefix) {
		return fmt.Errorf("$ref %q: only local %s references are supported", ref, componentPrefix)
	}
	if _, ok := schemas[componentName(ref)]; !ok {
		return fmt.Errorf("$ref %q: no such component", ref)
	}
	return nil
}

// walkRefs calls visit for every $ref inside one schema tree. Raw schemas are
// trees (references are strings), so this terminates.
func walkRefs(s *rawSchema, visit func(string) error) error {
	if s == nil {
		return nil
	}
	if s.Ref != "" {
		if err := visit(s.Ref); err != nil {
			return err
		}
	}
	for _, child := range children(s) {
		if err := walkRefs(child, visit); err != nil {
			return err
		}
	}
	return nil
}

// children lists the subschemas of s that the builder may visit.
func children(s *rawSchema) []*rawSchema {
	out := make([]*rawSchema, 0, len(s.Properties)+len(s.AllOf)+len(s.OneOf)+len(s.AnyOf)+2)
	for _, p := range s.Properties {
		out = append(out, p)
	}
	out = append(out, s.AdditionalProperties.Schema, s.Items.Schema)
	out = append(out, s.AllOf...)
	out = append(out, s.OneOf...)
	return append(out, s.AnyOf...)
}
