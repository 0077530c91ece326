package merge

import (
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// mergePatch returns the JSON merge patch (RFC 7386) that turns live into
// merged, whether it carries a set or keyed list, and the paths it replaces
// whole (see Result.Whole). A merge patch replaces lists whole, so such a list
// holds live elements as they were read and must be guarded by
// resourceVersion; atomic lists belong to the file alone and need no guard.
func mergePatch(live, merged map[string]any, root *schema.Node) (map[string]any, bool, []fieldpath.Path) {
	b := &mergePatchBuilder{}
	return b.object(nil, live, merged, root), b.mergedList, b.whole
}

type mergePatchBuilder struct {
	mergedList bool
	whole      []fieldpath.Path
}

func (b *mergePatchBuilder) object(a *at, c, m map[string]any, n *schema.Node) map[string]any {
	p := map[string]any{}
	for k, cv := range c {
		if _, ok := m[k]; !ok {
			p[k] = nil
			if isComposite(cv) {
				b.whole = append(b.whole, a.field(k).path())
			}
		}
	}
	for k, mv := range m {
		cv, inC := c[k]
		cm, cIsMap := cv.(map[string]any)
		mm, mIsMap := mv.(map[string]any)
		switch {
		case inC && cIsMap && mIsMap:
			if sub := b.object(a.field(k), cm, mm, n.Field(k)); len(sub) > 0 {
				p[k] = sub
			}
		case !inC || !fieldpath.Equal(cv, mv):
			p[k] = mv
			b.mergedList = b.mergedList || holdsMergedList(mv, n.Field(k))
			if inC && (isComposite(cv) || isComposite(mv)) {
				b.whole = append(b.whole, a.field(k).path())
			} else {
				b.listsIn(a.field(k), mv)
			}
		}
	}
	return p
}

// listsIn notes the lists in a value sent where live has none: the server
// merges its maps into whatever is there by then, and replaces its lists.
func (b *mergePatchBuilder) listsIn(a *at, v any) {
	switch x := v.(type) {
	case []any:
		b.whole = append(b.whole, a.path())
	case map[string]any:
		for k, e := range x {
			b.listsIn(a.field(k), e)
		}
	}
}

// isComposite reports a map or a list: a value that can hold what another
// writer added, unlike a scalar, whose change the plan's changes name.
func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
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
