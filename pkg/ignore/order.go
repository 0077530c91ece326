package ignore

import (
	"slices"
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// sortForRemoval orders paths so that removing one leaves the others
// naming what they named: among siblings in a list, the later position
// first; a key field of a keyed element after the element's other fields.
func sortForRemoval(paths []fieldpath.Path) {
	slices.SortStableFunc(paths, func(a, b fieldpath.Path) int {
		if ka, kb := isKeyField(a), isKeyField(b); ka != kb {
			if ka {
				return 1
			}
			return -1
		}
		for i := 0; i < len(a) && i < len(b); i++ {
			ea, eb := a[i], b[i]
			if ea.IsIndex() && eb.IsIndex() && ea.Index != eb.Index {
				return eb.Index - ea.Index
			}
			if c := strings.Compare(ea.String(), eb.String()); c != 0 {
				return c
			}
		}
		return len(b) - len(a)
	})
}

// isKeyField reports a path ending in a key field of the keyed element
// before it (containers[name=web].name).
func isKeyField(p fieldpath.Path) bool {
	if len(p) < 2 || !p[len(p)-1].IsField() || !p[len(p)-2].IsKey() {
		return false
	}
	for _, kv := range p[len(p)-2].Keys {
		if kv.Name == p[len(p)-1].Field {
			return true
		}
	}
	return false
}
