package schema

import (
	"fmt"
	"slices"
)

// setList makes an owned node the list o declares, checking that its
// elements suit the list type.
func (c *copier) setList(n *Node, o Override, path string) error {
	switch n.Type {
	case Unknown:
		n.Type = List
	case List:
	default:
		return fmt.Errorf("%s is of type %s, not a list", path, n.Type)
	}
	n.List, n.Keys, n.IdentityKeys = o.List, slices.Clone(o.Keys), nil
	return c.setElem(n, o.List, path)
}

// setElem: map lists hold objects, sets hold scalars; elements the schema
// does not describe become objects that preserve unknown fields.
func (c *copier) setElem(n *Node, list ListType, path string) error {
	elem := n.Elem.TypeOf()
	switch {
	case list == Map && elem == Scalar:
		return fmt.Errorf("%s holds scalars; declare it a set (%s:set) rather than giving keys", path, path)
	case list == Set && (elem == Object || elem == List):
		return fmt.Errorf("%s holds %ss; a set holds scalars, give keys instead", path, elem)
	case list == Map && elem == Unknown:
		e := c.own(n.Elem)
		e.Type, e.PreserveUnknown = Object, true
		n.Elem = e
	}
	return nil
}
