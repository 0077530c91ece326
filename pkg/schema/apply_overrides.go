package schema

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ApplyOverrides returns kind with the overrides that match gvk applied: each
// path becomes a list of the declared type and keys. The input graph is never
// changed (it is shared by other kinds of its document); nodes along each
// path are copied, and missing ones created — Unknown nodes holding the next
// field on the way, a list at the end. Without a matching override
// kind itself is returned. Overrides are refused for built-in kinds, whose
// lists must merge as the server's strategic merge patch merges them.
func ApplyOverrides(kind *Kind, gvk schema.GroupVersionKind, overrides []Override) (*Kind, error) {
	matching := matchingOverrides(overrides, gvk)
	if len(matching) == 0 {
		return kind, nil
	}
	if kind != nil && kind.Strategic {
		return nil, fmt.Errorf("applying merge key %s: %s is a built-in kind, which merges as strategic merge patch does; merge keys apply to custom resources only", matching[0], gvk)
	}
	c := &copier{owned: map[*Node]bool{}}
	root := c.own(kindRoot(kind))
	for _, o := range matching {
		if err := c.apply(root, o); err != nil {
			return nil, fmt.Errorf("applying merge key %s: %w", o, err)
		}
	}
	return &Kind{Root: root}, nil
}

func kindRoot(kind *Kind) *Node {
	if kind == nil {
		return nil
	}
	return kind.Root
}

// matchingOverrides keeps the overrides for gvk, shortest path first, so a
// list declared at spec.rules exists before spec.rules.ports is entered.
func matchingOverrides(overrides []Override, gvk schema.GroupVersionKind) []Override {
	var out []Override
	for _, o := range overrides {
		if o.Matches(gvk) {
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b Override) int { return cmp.Compare(len(a.Path), len(b.Path)) })
	return out
}

// copier copies nodes on write; owned are the copies it made, which it may
// change in place.
type copier struct {
	owned map[*Node]bool
}

// own returns a private copy of n (a new Unknown node for nil).
func (c *copier) own(n *Node) *Node {
	if c.owned[n] {
		return n
	}
	cp := &Node{}
	if n != nil {
		*cp = *n
		cp.Fields = maps.Clone(n.Fields)
	}
	c.owned[cp] = true
	return cp
}

func (c *copier) apply(root *Node, o Override) error {
	list, err := c.walk(root, o.Path)
	if err != nil {
		return err
	}
	return c.setList(list, o, strings.Join(o.Path, "."))
}

// walk returns an owned node at path, copying each node on the way.
func (c *copier) walk(root *Node, path []string) (*Node, error) {
	n := root
	for i, name := range path {
		if n.Type == List {
			n.Elem = c.own(n.Elem)
			n = n.Elem
		}
		if err := asStruct(n); err != nil {
			return nil, fmt.Errorf("%s %w", describePath(path[:i]), err)
		}
		child := c.own(n.Fields[name])
		n.Fields[name] = child
		n = child
	}
	return n, nil
}

// asStruct makes an owned node able to hold named fields. An unknown node
// stays Unknown, so a value that turns out to be a list is still accepted
// (and replaced whole); the merge engine dispatches on the value and reads
// Fields whenever it is an object.
func asStruct(n *Node) error {
	switch {
	case n.Type == Scalar:
		return errors.New("is a scalar, not an object")
	case n.Type == List:
		return errors.New("holds lists; a path cannot go through a list of lists")
	case n.Type == Object && len(n.Fields) == 0 && n.Elem != nil:
		return errors.New("is a map; a path cannot go through map values")
	case n.Type == Unknown || len(n.Fields) == 0:
		n.PreserveUnknown = true
	}
	if n.Fields == nil {
		n.Fields = map[string]*Node{}
	}
	return nil
}

func describePath(path []string) string {
	if len(path) == 0 {
		return "the object"
	}
	return strings.Join(path, ".")
}
