package fieldpath

// Difference is one field in which two objects differ: its path and its
// value on each side, nil where that side lacks it.
type Difference struct {
	Path     Path
	Old, New any
}

// Comparison is what differs between two objects, in the order the walk
// meets it: map fields by key, list elements by position or key.
type Comparison []Difference

// IsSame reports that nothing differs.
func (c Comparison) IsSame() bool { return len(c) == 0 }

// Paths are the paths of every difference; nil when none.
func (c Comparison) Paths() []Path { return c.pathsWhere(func(Difference) bool { return true }) }

// Added are the paths only the new side holds.
func (c Comparison) Added() []Path {
	return c.pathsWhere(func(d Difference) bool { return d.Old == nil && d.New != nil })
}

// Removed are the paths only the old side holds.
func (c Comparison) Removed() []Path {
	return c.pathsWhere(func(d Difference) bool { return d.Old != nil && d.New == nil })
}

// Modified are the paths both sides hold, with other values.
func (c Comparison) Modified() []Path {
	return c.pathsWhere(func(d Difference) bool { return d.Old != nil && d.New != nil })
}

func (c Comparison) pathsWhere(keep func(Difference) bool) []Path {
	var out []Path
	for _, d := range c {
		if keep(d) {
			out = append(out, d.Path)
		}
	}
	return out
}

// Depth says how far a comparison goes into values that differ.
type Depth int

const (
	// ByField compares maps field by field and anything else whole: a
	// list that differs is one difference (the server may merge a list
	// by keys the caller does not know; whole, it refuses more, never
	// less), so is a map one side lacks.
	ByField Depth = iota
	// ByPosition is ByField, and lists of equal length element by
	// element ([0], [1]): the leaves a diff of the two sides shows.
	ByPosition
	// ByKey goes down to the leaves: lists keyed by the first of ListKeys
	// that every element holds with distinct values are compared element
	// by element ([name=web]), and a map or keyed list one side lacks is
	// walked too (a new ports list holds the file's containerPort and the
	// server's default protocol: two leaves, each with its own cause).
	ByKey
)

// CompareOptions choose how deep a comparison goes and what it leaves out.
type CompareOptions struct {
	Depth Depth
	// Skip leaves out a field and everything under it (never the root).
	Skip func(Path) bool
}

// ListKeys are the fields that key the elements of the lists most objects
// hold (containers, env, volumes by name; ports by number), the names
// managedFields use for those lists, so that the owners of a path a ByKey
// comparison gives can be read. The schema is not at hand where a diff's
// sides are compared; a list none of these keys is one atomic value.
var ListKeys = []string{"name", "containerPort", "port", "mountPath", "devicePath", "type", "key", "ip"}

// CompareObjects is the one comparison of two decoded JSON values (objects
// as unstructured holds them, patch bodies): what differs from a to b.
// Leaves are compared with Equal. Hand-written: structured-merge-diff's
// typed comparison needs a schema, which a custom resource may lack, and
// its paths are not this package's Path.
func CompareObjects(a, b any, opts CompareOptions) Comparison {
	c := comparer{opts: opts}
	c.value(nil, a, b)
	return c.out
}

type comparer struct {
	opts CompareOptions
	out  Comparison
}

func (c *comparer) value(at Path, a, b any) {
	if len(at) > 0 && c.opts.Skip != nil && c.opts.Skip(at) {
		return
	}
	if Equal(a, b) {
		return
	}
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	if aMap && bMap || c.opts.Depth == ByKey && (aMap && b == nil || a == nil && bMap) {
		EachField(at, am, bm, c.value)
		return
	}
	if c.list(at, a, b) {
		return
	}
	c.out = append(c.out, Difference{Path: at, Old: a, New: b})
}

// list compares two lists element by element where the depth allows;
// false: they are compared whole.
func (c *comparer) list(at Path, a, b any) bool {
	al, aList := a.([]any)
	bl, bList := b.([]any)
	switch c.opts.Depth {
	case ByPosition:
		if !aList || !bList || len(al) != len(bl) {
			return false
		}
		for i := range al {
			c.value(at.Child(Index(i)), al[i], bl[i])
		}
		return true
	case ByKey:
		key := ListKey(al, bl)
		if !(aList || a == nil) || !(bList || b == nil) || key == "" {
			return false
		}
		c.keyed(at, key, al, bl)
		return true
	}
	return false
}

// keyed compares two lists by the key field, elements in the order they
// first appear (a's, then those only b holds).
func (c *comparer) keyed(at Path, key string, a, b []any) {
	elems := map[string][2]any{}
	var order []string
	for side, list := range [][]any{a, b} {
		for _, e := range list {
			k := ScalarText(e.(map[string]any)[key])
			pair, seen := elems[k]
			if !seen {
				order = append(order, k)
			}
			pair[side] = e
			elems[k] = pair
		}
	}
	for _, k := range order {
		pair := elems[k]
		elem := pair[0]
		if elem == nil {
			elem = pair[1]
		}
		c.value(at.Child(KeyOf(elem.(map[string]any), []string{key})), pair[0], pair[1])
	}
}

// ListKey is the first of ListKeys that keys both lists, "" for none.
func ListKey(a, b []any) string {
	if len(a)+len(b) == 0 {
		return ""
	}
	for _, key := range ListKeys {
		if keysList(a, key) && keysList(b, key) {
			return key
		}
	}
	return ""
}

// keysList reports whether every element of list is a map holding key,
// with distinct scalar values.
func keysList(list []any, key string) bool {
	seen := map[string]bool{}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		v, ok := m[key]
		text := ScalarText(v)
		if !ok || text == "\x00" || seen[text] {
			return false
		}
		seen[text] = true
	}
	return true
}
