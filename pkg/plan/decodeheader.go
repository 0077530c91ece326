package plan

import (
	"fmt"
	"slices"
)

// header is what a document says before its list: its members' compact
// values, by name, and the names seen so far.
type header struct {
	raw      map[string][]byte
	names    []string
	nested   bool   // a plan of a PlanList
	listName string // "items" or "plans", once begun
	summed   *summer
}

// seen records name, reporting whether it came before.
func (h *header) seen(name string) bool {
	if slices.Contains(h.names, name) {
		return true
	}
	h.names = append(h.names, name)
	return false
}

func (h *header) text(name string) (string, error) {
	var s string
	if raw, ok := h.raw[name]; ok {
		if err := unmarshalStrict(raw, &s); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

// early refuses another format as soon as its apiVersion or kind is
// read, before its items are: a plan of a later version gets "version X
// is not supported" rather than a complaint about its first item.
func (h *header) early() error {
	if _, ok := h.raw["apiVersion"]; ok {
		version, err := h.text("apiVersion")
		switch {
		case err != nil:
			return err
		case olderAPIVersions[version]:
			return fmt.Errorf("%w: apiVersion %q: %w", ErrInvalid, version, ErrOlderVersion)
		case version != APIVersion:
			return fmt.Errorf("%w: apiVersion %q is not supported (this kapply reads %s)", ErrInvalid, version, APIVersion)
		}
	}
	if _, ok := h.raw["kind"]; ok {
		kind, err := h.text("kind")
		switch {
		case err != nil:
			return err
		case kind == SetKind && h.nested:
			return fmt.Errorf("%w: kind %q is not %q: a %s holds plans", ErrInvalid, kind, Kind, SetKind)
		case kind != Kind && kind != SetKind:
			return fmt.Errorf("%w: kind %q is not %q nor %q", ErrInvalid, kind, Kind, SetKind)
		}
		if h.listName != "" && h.listName != listOf(kind) {
			return fmt.Errorf("%w: unknown field %q in a %s", ErrInvalid, h.listName, kind)
		}
	}
	return nil
}

// listOf names the list of a document of kind.
func listOf(kind string) string {
	if kind == SetKind {
		return "plans"
	}
	return "items"
}

// list records that the document's list, name, begins.
func (h *header) list(name string) error {
	if name == "plans" && h.nested {
		return fmt.Errorf("%w: unknown field %q in a plan of a %s", ErrInvalid, name, SetKind)
	}
	h.listName = name
	return h.early()
}

// finish checks the whole header and sums it: apiVersion and kind
// present, a PlanList without a cluster or settings; it returns the kind.
func (h *header) finish() (string, error) {
	for _, name := range []string{"apiVersion", "kind"} {
		if _, ok := h.raw[name]; !ok {
			return "", fmt.Errorf("%w: the document has no %s (not a plan?)", ErrInvalid, name)
		}
	}
	if err := h.early(); err != nil {
		return "", err
	}
	kind, _ := h.text("kind")
	if kind == SetKind {
		for _, name := range []string{"cluster", "settings", "gates"} {
			if h.raw[name] != nil {
				return "", fmt.Errorf("%w: unknown field %q in a %s", ErrInvalid, name, SetKind)
			}
		}
	}
	for _, name := range headerOrder {
		if raw, ok := h.raw[name]; ok {
			h.summed.field(name, raw)
		}
	}
	if h.listName != "" {
		h.summed.field(h.listName, nil)
	}
	return kind, nil
}

// plan is the header's cluster, settings and gates.
func (h *header) plan() (Cluster, Settings, []Gate, error) {
	var c clusterJSON
	var s settingsJSON
	var g []gateJSON
	for name, v := range map[string]any{"cluster": &c, "settings": &s, "gates": &g} {
		if raw, ok := h.raw[name]; ok {
			if err := unmarshalStrict(raw, v); err != nil {
				return Cluster{}, Settings{}, nil, err
			}
		}
	}
	return Cluster{Server: c.Server, Context: c.Context, User: c.User, ID: c.ID}, s.settings(), gatesFromWire(g), nil
}
