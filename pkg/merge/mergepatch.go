package merge

import (
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// mergePatch returns the JSON merge patch (RFC 7386) that turns live into
// merged, and whether it carries a set or keyed list. A merge patch replaces
// lists whole, so such a list holds live elements as they were read and must
// be guarded by resourceVersion; atomic lists belong to the file alone and
// need no guard.
func mergePatch(live, merged map[string]any, root *schema.Node) (map[string]any, bool) {
	b := &mergePatchBuilder{}
	return b.object(live, merged, root), b.mergedList
}

type mergePatchBuilder struct {
	mergedList bool
}

func (b *mergePatchBuilder) object(c, m map[string]any, n *schema.Node) map[string]any {
	p := map[string]any{}
	for k := range c {
		if _, ok := m[k]; !ok {
			p[k] = nil
		}
	}
	for k, mv := range m {
		cv, inC := c[k]
		cm, cIsMap := cv.(map[string]any)
		mm, mIsMap := mv.(map[string]any)
		switch {
		case inC && cIsMap && mIsMap:
			if sub := b.object(cm, mm, n.Field(k)); len(sub) > 0 {
				p[k] = sub
			}
		case !inC || !fieldpath.Equal(cv, mv):
			p[k] = mv
			b.mergedList = b.mergedList || holdsMergedList(mv, n.Field(k))
		}
	}
	return p
}

// holdsMergedList reports whether a value sent whole contains a set or
// keyed list.
func holdsMergedList(v any, n *schema.Node) bool {
	switch x := v.(type) {
	case []any:
		if listKind(n) != schema.Atomic {
			return true
		}
		for _, e := range x {
			if holdsMergedList(e, n.Item()) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if holdsMergedList(e, n.Field(k)) {
				return true
			}
		}
	}
	return false
}
