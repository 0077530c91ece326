package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Override is a user's declaration of how one list of a custom resource kind
// merges, for CRDs that leave the list unmarked (and so atomic). See
// docs/merge-keys.md for the flag and file syntax.
type Override struct {
	// Group and Kind name the kind ("" is the core group); Version "" matches
	// every version.
	Group, Version, Kind string
	// Path is the list's field names from the object's root; a list on the
	// way is entered through its elements ("spec.rules.ports"). It names a
	// node of the schema, where all of a list's elements share one, so it
	// is not a fieldpath.Path, which names a field of an object.
	Path []string
	// List is Map (merge elements by Keys), Set or Atomic.
	List ListType
	// Keys are the fields that identify a Map list's elements.
	Keys []string
}

// mergeKeySyntax is shown in parse errors.
const mergeKeySyntax = "KIND[.GROUP][/VERSION]:PATH=KEY[,KEY...] or KIND[.GROUP][/VERSION]:PATH:set|atomic"

// ParseMergeKey parses one --merge-key value:
//
//	Widget.example.com:spec.rules=name,port     merge spec.rules by name+port
//	Widget.example.com/v1:spec.tags:set         merge spec.tags as a set (v1 only)
//	Widget.example.com:spec.rules.ports=port    a list inside spec.rules' elements
func ParseMergeKey(s string) (Override, error) {
	o, err := parseMergeKey(s)
	if err != nil {
		return Override{}, fmt.Errorf("parsing merge key %q (want %s): %w", s, mergeKeySyntax, err)
	}
	return o, nil
}

func parseMergeKey(s string) (Override, error) {
	target, rule, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Override{}, errors.New("missing ':' between kind and path")
	}
	var o Override
	o.Group, o.Version, o.Kind = parseTarget(target)
	if strings.HasSuffix(target, "/") {
		return Override{}, errors.New(`version "": nothing after '/'; leave out "/VERSION" to match every version`)
	}
	var err error
	if o.Path, o.List, o.Keys, err = parseRule(rule); err != nil {
		return Override{}, err
	}
	return o, o.validate()
}

// parseTarget splits "Kind.group/version": kinds never contain dots, groups
// never contain slashes.
func parseTarget(s string) (group, version, kind string) {
	s, version, _ = strings.Cut(s, "/")
	kind, group, _ = strings.Cut(s, ".")
	return group, version, kind
}

// parseRule splits "path=k1,k2" (a map list) or "path:set" / "path:atomic".
func parseRule(rule string) (path []string, list ListType, keys []string, err error) {
	i := strings.IndexAny(rule, "=:")
	if i < 0 {
		return nil, Atomic, nil, errors.New("missing '=KEYS' or ':set' after the path")
	}
	path = strings.Split(rule[:i], ".")
	if rule[i] == '=' && rule[i+1:] == "" {
		return path, Map, nil, nil
	}
	if rule[i] == '=' {
		return path, Map, strings.Split(rule[i+1:], ","), nil
	}
	list, ok := parseListType(rule[i+1:])
	if !ok || list == Map {
		return nil, Atomic, nil, fmt.Errorf("list type %q: want set or atomic (a map list is written PATH=KEYS)", rule[i+1:])
	}
	return path, list, nil, nil
}

// validate checks what the flag and the file have in common.
func (o Override) validate() error {
	if o.Kind == "" || strings.ContainsAny(o.Kind, "./:") {
		return fmt.Errorf("kind %q: want a kind name such as Widget", o.Kind)
	}
	// A version or group the API server could never serve would make the
	// key match nothing, silently.
	if o.Version != "" && len(validation.IsDNS1035Label(o.Version)) > 0 {
		return fmt.Errorf("version %q: want an API version such as v1 or v1beta1", o.Version)
	}
	if o.Group != "" && len(validation.IsDNS1123Subdomain(o.Group)) > 0 {
		return fmt.Errorf("group %q: want an API group such as example.com", o.Group)
	}
	if err := checkNames("path", o.Path); err != nil {
		return err
	}
	switch {
	case o.List == Map && len(o.Keys) == 0:
		return errors.New("keys: a map list needs at least one key")
	case o.List != Map && len(o.Keys) > 0:
		return fmt.Errorf("keys: a %s list has no keys", o.List)
	}
	return checkNames("keys", o.Keys)
}

// checkNames rejects empty and repeated field names ("spec..rules", "a,,b").
func checkNames(what string, names []string) error {
	for i, n := range names {
		if strings.TrimSpace(n) == "" || strings.ContainsAny(n, ".,:=") {
			return fmt.Errorf("%s: field name %d %q is empty or contains one of . , : =", what, i+1, n)
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("%s: %q appears twice", what, n)
		}
	}
	return nil
}

// String is the override in --merge-key syntax.
func (o Override) String() string {
	target := o.Kind
	if o.Group != "" {
		target += "." + o.Group
	}
	if o.Version != "" {
		target += "/" + o.Version
	}
	path := strings.Join(o.Path, ".")
	if o.List == Map {
		return target + ":" + path + "=" + strings.Join(o.Keys, ",")
	}
	return target + ":" + path + ":" + o.List.String()
}

// Matches reports whether the override is about gvk.
func (o Override) Matches(gvk schema.GroupVersionKind) bool {
	return o.Group == gvk.Group && o.Kind == gvk.Kind && (o.Version == "" || o.Version == gvk.Version)
}
