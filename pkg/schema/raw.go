package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// rawSchema is the part of an OpenAPI v3 schema object that decides how a
// field merges. It is decoded with encoding/json rather than kube-openapi's
// spec3/spec types: those keep every validation keyword, description and
// example (most of a 2 MB document) in generic maps we would then have to
// type-assert, while this struct names the dozen keywords we read and lets the
// decoder skip the rest. The same struct decodes a CRD's JSONSchemaProps,
// whose JSON names are the OpenAPI ones, so both sources share one builder.
type rawSchema struct {
	Ref                  string                `json:"$ref"`
	Type                 typeName              `json:"type"`
	Format               string                `json:"format"`
	Properties           map[string]*rawSchema `json:"properties"`
	AdditionalProperties schemaOrBool          `json:"additionalProperties"`
	Items                schemaOrArray         `json:"items"`
	AllOf                []*rawSchema          `json:"allOf"`
	OneOf                []*rawSchema          `json:"oneOf"`
	AnyOf                []*rawSchema          `json:"anyOf"`

	PatchStrategy   string   `json:"x-kubernetes-patch-strategy"`
	PatchMergeKey   string   `json:"x-kubernetes-patch-merge-key"`
	ListType        string   `json:"x-kubernetes-list-type"`
	ListMapKeys     []string `json:"x-kubernetes-list-map-keys"`
	MapType         string   `json:"x-kubernetes-map-type"`
	PreserveUnknown bool     `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString     bool     `json:"x-kubernetes-int-or-string"`
	Embedded        bool     `json:"x-kubernetes-embedded-resource"`
	GVKs            []rawGVK `json:"x-kubernetes-group-version-kind"`
}

type rawGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// typeName is OpenAPI's "type": a string, or (JSON Schema style) a list such
// as ["string","null"] of which the first non-null entry counts.
type typeName string

func (t *typeName) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("decoding type list: %w", err)
		}
		*t = firstNonNull(list)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decoding type: %w", err)
	}
	*t = typeName(s)
	return nil
}

func firstNonNull(list []string) typeName {
	for _, s := range list {
		if s != "null" {
			return typeName(s)
		}
	}
	return ""
}

// schemaOrBool is additionalProperties: a schema, or true/false. Only the
// schema form describes map values; true alone is a map of unknown values.
type schemaOrBool struct {
	Schema *rawSchema
	Allows bool
}

func (s *schemaOrBool) UnmarshalJSON(b []byte) error {
	switch strings.TrimSpace(string(b)) {
	case "true":
		s.Allows = true
		return nil
	case "false", "null":
		return nil
	}
	s.Allows = true
	return json.Unmarshal(b, &s.Schema)
}

// schemaOrArray is items: one schema for every element, or (tuple form, never
// structural) one per position, which we treat as unknown elements.
type schemaOrArray struct {
	Schema *rawSchema
}

func (s *schemaOrArray) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		return nil
	}
	return json.Unmarshal(b, &s.Schema)
}

// target is the component a schema stands for: its $ref, or the first $ref of
// its allOf, which is how v3 documents attach a description or an extension
// to a referenced type. Other allOf members only validate values.
func (s *rawSchema) target() string {
	if s.Ref != "" {
		return s.Ref
	}
	for _, m := range s.AllOf {
		if m != nil && m.Ref != "" {
			return m.Ref
		}
	}
	return ""
}

// patchStrategy is a parsed x-kubernetes-patch-strategy ("merge",
// "retainKeys", "merge,retainKeys", "replace").
type patchStrategy struct {
	merge, retain, replace bool
}

// patchStrategies splits x-kubernetes-patch-strategy as strategic merge
// patch does (extractRetainKeysPatchStrategy): retainKeys may accompany one
// other strategy, which is merge or replace.
func (s *rawSchema) patchStrategies() patchStrategy {
	var ps patchStrategy
	for _, p := range strings.Split(s.PatchStrategy, ",") {
		switch strings.TrimSpace(p) {
		case "merge":
			ps.merge = true
		case "retainKeys":
			ps.retain = true
		case "replace":
			ps.replace = true
		}
	}
	return ps
}
