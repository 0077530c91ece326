package load

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// yamlGen writes random manifests for TestReadLocalGenerated: objects of
// the usual shape (apiVersion, kind, metadata, Lists and their items) and
// of every other, random data under them in block and flow style, with
// anchors, aliases and merge keys, comments, scalars of every YAML 1.1
// type, several documents a file, JSON, and broken encodings. Most of it is
// valid, so that readLocal reads it rather than leaving it to the builder.
type yamlGen struct {
	r *rand.Rand
	// anchors are the nodes with an anchor, complete (an alias to one
	// being written is an error of its own).
	anchors []*genNode
	n       int // anchors named so far
}

// genNode is a YAML node: a scalar (text), a map (keys, values) or a
// sequence (values).
type genNode struct {
	text   string // a scalar as written; "" for a map or sequence
	isMap  bool
	keys   []string
	values []*genNode
	anchor string
	alias  *genNode // written as *anchor of this node
	merge  *genNode // a map merged in with <<
	// groups are the keyGroups a map's keys come from, its merge's
	// included: a map must not hold two keys of one group.
	groups map[int]bool
}

// keyGroups are spellings of map keys; the spellings of one group name
// the same JSON key once converted (1, '1', 01, 0x1 and 1.0 are all "1";
// yes, on and true are "true"), keys of different groups never do. A map
// takes at most one key of a group: two keys that are different in YAML
// but one string in JSON leave the builder either value, by map order
// (TestReadLocalCollidingKeys).
var keyGroups = [][]string{
	{"a"}, {"b", "'b'", `"b"`}, {"name"}, {"value"}, {"x.y/z"}, {"with space"}, {"k8s.io/label"},
	{"1", "'1'", `"1"`, "01", "0x1", "+1", "1.0"}, {"-1", "'-1'"}, {"0", "-0", "'0'", "0.0"},
	{"true", "yes", "on", "Y", "'true'"}, {"false", "no", "off", "n", `"false"`},
	{"0.5", ".5", "'0.5'"}, {"1e+06", "1e6", "1000000.0", "'1e+06'"}, {"1.2345679e+08", "123456789.0"},
	{".inf", "'.inf'", ".Inf"}, {"-.inf", "-.Inf"}, {".nan", "'.nan'", ".NaN"},
	{"2001-12-14", "'2001-12-14'"}, {"15", "0o17", "017", "0xF", "'15'"}, {"1000", "1_000", "'1000'"},
	{"5", "0b101"}, {"9223372036854775807", "'9223372036854775807'"}, {"é", `"\u00e9"`},
	{"items"}, {"kind"}, {"apiVersion"}, {"metadata"}, {"''"},
}

// badKeys are keys the builder refuses (null, a huge integer, a key that is
// a list); a document takes at most one, since which the builder reports
// first depends on map order.
var badKeys = []string{"~", "null", "18446744073709551615", "? [a, b]", "<<"}

// scalars are values of every YAML 1.1 type, quoted and not.
var scalars = []string{
	"x", "hello world", "yes", "no", "on", "off", "y", "n", "True", "FALSE", "~", "null", "Null", "",
	"0", "-0", "+0", "017", "0o17", "0x1F", "-0x1F", "0b1010", "-0b1010", "1_000", "1e3", "1E3", "1.0",
	"-0.0", ".5", "1.", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
	"18446744073709551616", "123456789012345678901234567890", "1e21", "1e20", "1.5e300", "1e400",
	"5e-324", "0.1", "3.14159", "0.1e-7", "-1e-7", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
	"2001-12-14 21:59:43.10", "2001-12-14T21:59:43Z", "12:30:45", "1:20", "100m", "64Mi",
	`"1"`, "'2'", `"yes"`, "'no'", `""`, "''", `"a: b"`, "'it''s'", `"tab\there"`, `"\u00e9\u65e5"`,
	`"line\nbreak"`, `"nul\0"`, `"esc \" quote"`, "'a # b'", "http://x/y?z=1", "-dash", "é日本",
	"!!str 123", "!!str yes", `!!int "7"`, "!!int 7", "!!float 3", `!!float "3.5"`, "!!bool yes",
	"!!null ''", "!!binary aGVsbG8=", "!!binary //4=", "!!timestamp 2001-12-14", "!custom tagged",
	"!!str ~", "|\n  multi\n  line\n", ">-\n  folded\n  text", "|+\n  kept\n\n",
}

// badScalars are values the builder fails on: JSON has no NaN or
// infinity, and the rest is not YAML.
var badScalars = []string{".inf", "-.inf", "+.inf", ".nan", ".NaN", "!!float .inf", "!!int x", "a: b",
	"@at", "%pct", "`tick`", "[a, b", "*undefined", "{a: 1", "!!binary ???"}

func (g *yamlGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// either picks one of good, or now and then one of bad.
func (g *yamlGen) either(good, bad []string) string {
	if g.chance(0.02) {
		return g.pick(bad)
	}
	return g.pick(good)
}

// scalar is a random value: one of badScalars now and then.
func (g *yamlGen) scalar() string {
	if g.chance(0.005) {
		return g.pick(badScalars)
	}
	return g.pick(scalars)
}
func (g *yamlGen) chance(p float64) bool { return g.r.Float64() < p }

// tree is a random node, depth levels deep at most.
func (g *yamlGen) tree(depth int) *genNode {
	var n *genNode
	switch k := g.r.IntN(10); {
	case depth <= 0 || k < 5:
		n = &genNode{text: g.scalar()}
	case k < 8:
		n = g.randomMap(depth)
	default:
		n = &genNode{}
		for range g.r.IntN(4) {
			n.values = append(n.values, g.tree(depth-1))
		}
	}
	return g.anchored(n)
}

// anchored gives n an anchor, or returns an alias to an anchored node.
func (g *yamlGen) anchored(n *genNode) *genNode {
	switch {
	case len(g.anchors) > 0 && g.chance(0.05):
		return &genNode{alias: g.anchors[g.r.IntN(len(g.anchors))]}
	case g.chance(0.08):
		g.n++
		n.anchor = fmt.Sprintf("a%d", g.n)
		g.anchors = append(g.anchors, n)
	}
	return n
}

func (g *yamlGen) randomMap(depth int) *genNode {
	n := &genNode{isMap: true, groups: map[int]bool{}}
	if g.chance(0.4) {
		for _, a := range g.anchors {
			if a.isMap && a.merge == nil && g.chance(0.5) {
				n.merge = a
				for group := range a.groups {
					n.groups[group] = true
				}
				break
			}
		}
	}
	for range g.r.IntN(5) {
		group := g.r.IntN(len(keyGroups))
		if n.groups[group] {
			continue
		}
		n.groups[group] = true
		n.keys = append(n.keys, g.pick(keyGroups[group]))
		n.values = append(n.values, g.tree(depth-1))
	}
	return n
}

// object is a random manifest: apiVersion, kind, metadata, data, items,
// each usually there and usually well formed.
func (g *yamlGen) object(depth int, list bool) *genNode {
	n := &genNode{isMap: true}
	add := func(key string, v *genNode) {
		n.keys = append(n.keys, key)
		n.values = append(n.values, v)
	}
	s := func(text string) *genNode { return &genNode{text: text} }
	if g.chance(0.92) {
		add("apiVersion", s(g.either([]string{"v1", "v1", "apps/v1", "example.com/v1alpha1", "''", "~"}, []string{"a/b/c", "1", "[v1]"})))
	}
	kinds := []string{"ConfigMap", "Secret", "Widget", "Deployment"}
	if list {
		kinds = []string{"List", "ConfigMapList", "WidgetList", "List", "Lists"}
	}
	if g.chance(0.98) {
		add("kind", s(g.either(kinds, []string{"''", "5", "~", "{a: b}"})))
	}
	if g.chance(0.9) {
		add("metadata", g.metadata())
	}
	if g.chance(0.7) {
		add(g.pick([]string{"data", "spec", "stringData", "status"}), g.randomMap(depth))
	}
	if list || g.chance(0.03) {
		items := &genNode{}
		if !g.chance(0.05) {
			for range g.r.IntN(4) {
				switch {
				case g.chance(0.85):
					items.values = append(items.values, g.object(depth-1, depth > 1 && g.chance(0.05)))
				case g.chance(0.5):
					items.values = append(items.values, s("~"))
				default:
					items.values = append(items.values, g.tree(1))
				}
			}
		} else {
			items.text = g.pick([]string{"~", "x", "{}"})
		}
		add(g.pick([]string{"items", "items", "items", "Items"}), items)
	}
	g.r.Shuffle(len(n.keys), func(i, j int) {
		n.keys[i], n.keys[j] = n.keys[j], n.keys[i]
		n.values[i], n.values[j] = n.values[j], n.values[i]
	})
	return n
}

func (g *yamlGen) metadata() *genNode {
	n := &genNode{isMap: true}
	add := func(key string, values ...string) {
		n.keys = append(n.keys, key)
		v := values[0]
		if g.chance(0.2) || key == "labels" {
			v = g.pick(values)
		}
		if v == "{map}" {
			m := &genNode{isMap: true}
			for range g.r.IntN(3) {
				m.keys = append(m.keys, g.pick([]string{"app", "tier", "skip", "k8s.io/x"}))
				m.values = append(m.values, &genNode{text: g.either([]string{"a", "b", "x", "'1'", "''", "|\n  multi\n  line"}, []string{"yes", "1", "~"})})
			}
			m.keys = slices.Compact(m.keys) // adjacent repeats only: a key set twice is also wanted, rarely
			m.values = m.values[:len(m.keys)]
			n.values = append(n.values, m)
			return
		}
		n.values = append(n.values, &genNode{text: v})
	}
	add("name", g.either([]string{"a", "web-1", "x.y", "'quoted'", "'123'"}, []string{"123", "yes", "~", "[a]", "{a: b}", "1.5"}))
	if g.chance(0.4) {
		add("namespace", g.either([]string{"ns-a", "default", "''", "~"}, []string{"1"}))
	}
	if g.chance(0.6) {
		add("labels", g.either([]string{"{map}", "{map}", "~"}, []string{"[a]", "x"}))
	}
	if g.chance(0.3) {
		add("annotations", g.either([]string{"{map}", "~"}, []string{"5"}))
	}
	opt := []struct{ key, values string }{
		{"resourceVersion", "'5'|5|~|x"}, {"generation", "1|1.5|'2'|~|-3|1e3"},
		{"creationTimestamp", "~|'2020-01-01T00:00:00Z'|2020-01-01|'bad'|2001-12-14t21:59:43.10-05:00"},
		{"deletionTimestamp", "~|'2020-01-01T00:00:00Z'"}, {"deletionGracePeriodSeconds", "30|~|'30'|1.0"},
		{"finalizers", "[a, b]|[1]|~|x|[]"}, {"uid", "abc|1|~"}, {"generateName", "g-|~|[x]"},
		{"selfLink", "/x|1"}, {"foo", "[1]|{a: 1}|~|.nan"}, {"Name", "1|x"},
		{"ownerReferences", "[{apiVersion: v1, kind: A, name: o, uid: u, controller: yes}]|[{name: 1}]|~|[{controller: x}]|x"},
		{"managedFields", "[{manager: m, operation: Apply, fieldsV1: {f:data: {}}, time: ~}]|[{fieldsV1: 1}]|[{time: x}]|~"},
	}
	for _, o := range opt {
		if g.chance(0.03) {
			add(o.key, strings.Split(o.values, "|")...)
		}
	}
	return n
}

// write writes n in block style at indent, after the text that precedes
// it on its line (a key and ':', a '- ', or nothing).
func (g *yamlGen) write(b *strings.Builder, n *genNode, indent int) {
	switch {
	case n.alias != nil:
		b.WriteString(" *" + n.alias.anchor + "\n")
		return
	case n.anchor != "":
		b.WriteString(" &" + n.anchor)
	}
	if n.text != "" || (!n.isMap && n.values == nil) || (n.isMap && len(n.keys) == 0 && n.merge == nil) || g.chance(0.15) {
		// A block scalar's lines are indented deeper than its key.
		b.WriteString(" " + strings.ReplaceAll(g.flow(n), "\n  ", "\n"+strings.Repeat(" ", indent)))
		if g.chance(0.05) {
			b.WriteString(" # comment")
		}
		b.WriteString("\n")
		return
	}
	b.WriteString("\n")
	g.entries(b, n, indent)
}

// entries writes the entries of a block map or sequence at indent.
func (g *yamlGen) entries(b *strings.Builder, n *genNode, indent int) {
	pad := strings.Repeat(" ", indent)
	if n.isMap {
		if n.merge != nil {
			b.WriteString(pad + "<<: *" + n.merge.anchor + "\n")
		}
		for i, key := range n.keys {
			if g.chance(0.03) {
				b.WriteString(pad + "# a comment\n")
			}
			b.WriteString(pad + key + ":")
			g.write(b, n.values[i], indent+2)
		}
		return
	}
	for _, v := range n.values {
		// "- key: value" with the map's other keys under the first, as
		// most manifests write a list of maps.
		if v.isMap && len(v.keys) > 0 && v.anchor == "" && v.alias == nil && g.chance(0.7) {
			var item strings.Builder
			g.entries(&item, v, indent+2)
			b.WriteString(pad + "- " + item.String()[indent+2:])
			continue
		}
		b.WriteString(pad + "-")
		g.write(b, v, indent+2)
	}
}

// flow is n in flow style (a block scalar, | or >, as it is).
func (g *yamlGen) flow(n *genNode) string {
	switch {
	case n.alias != nil:
		return "*" + n.alias.anchor
	case n.text != "":
		return n.text
	}
	var parts []string
	if n.isMap {
		if n.merge != nil {
			parts = append(parts, "<<: *"+n.merge.anchor)
		}
		for i, key := range n.keys {
			parts = append(parts, key+": "+g.flowValue(n.values[i]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	for _, v := range n.values {
		parts = append(parts, g.flowValue(v))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (g *yamlGen) flowValue(n *genNode) string {
	s := g.flow(n)
	if n.anchor != "" && n.alias == nil {
		s = "&" + n.anchor + " " + s
	}
	if strings.Contains(s, "\n") {
		return `"block"` // a block scalar has no place in flow style
	}
	return s
}

// document is one random document of a file.
func (g *yamlGen) document() string {
	g.anchors, g.n = nil, 0
	switch k := g.r.IntN(100); {
	case k < 4:
		return g.either([]string{"", "# only a comment\n", "~\n", "null\n", "\n\n"}, []string{"[a, b]\n", "just text\n", "{}\n"})
	case k < 8:
		return g.jsonDocument()
	case k < 10: // a key set twice, or a bad key
		doc := g.object(2, false)
		if g.chance(0.5) {
			doc.keys = append(doc.keys, doc.keys[0])
		} else {
			doc.keys = append(doc.keys, g.pick(badKeys))
		}
		doc.values = append(doc.values, &genNode{text: "1"})
		return g.render(doc)
	}
	return g.render(g.object(3, g.chance(0.12)))
}

func (g *yamlGen) render(n *genNode) string {
	var b strings.Builder
	if g.chance(0.05) {
		b.WriteString("# leading comment\n")
	}
	if g.chance(0.03) || len(n.keys) == 0 {
		b.WriteString(g.flow(n) + "\n")
		return b.String()
	}
	b.WriteString("\n")
	g.entries(&b, n, 0)
	return strings.TrimPrefix(b.String(), "\n")
}

// jsonDocument is an object in JSON, with JSON's own number forms and
// escapes, sometimes a key set twice.
func (g *yamlGen) jsonDocument() string {
	values := []string{`"x"`, "1", "-0", "1e3", "1.0", "1E400", "18446744073709551616", "true", "null",
		`"\u00e9"`, `"\ud800"`, "1.5", "[]", "{}", `[1, "a", null]`, `{"k": 1e21}`}
	var fields []string
	fields = append(fields, `"apiVersion": "v1"`, `"kind": "`+g.pick([]string{"ConfigMap", "List"})+`"`,
		fmt.Sprintf(`"metadata": {"name": %q, "labels": {"app": "a"}}`, g.pick([]string{"j", "k"})))
	for range g.r.IntN(4) {
		fields = append(fields, fmt.Sprintf(`"%s": %s`, g.pick([]string{"data", "x", "y", "items", "z"}), g.pick(values)))
	}
	g.r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	return "{" + strings.Join(fields, g.pick([]string{", ", ",\n  "})) + "}\n"
}

// file is the content of one random file: documents between separators,
// now and then a JSON stream, a byte order mark, CRLF line ends, a byte
// that is not UTF-8 or a tab.
func (g *yamlGen) file() []byte {
	var b strings.Builder
	switch k := g.r.IntN(100); {
	case k < 5: // a JSON stream
		for range 1 + g.r.IntN(3) {
			b.WriteString(g.pick([]string{"", " ", "\n", "\t"}) + g.jsonDocument())
		}
		if g.chance(0.2) {
			b.WriteString(g.pick([]string{"null", "x", "---\na: 1\n", "[1]", "{"}))
		}
	default:
		if g.chance(0.1) {
			b.WriteString(g.pick([]string{"---\n", "--- # start\n", "%YAML 1.1\n---\n"}))
		}
		for i := range 1 + g.r.IntN(3) {
			if i > 0 {
				b.WriteString(g.either([]string{"---\n", "---\n", "--- # next\n", "...\n---\n", "---\n---\n", "---  \n"}, []string{"---x\n", "--- |\n"}))
			}
			b.WriteString(g.document())
		}
	}
	s := b.String()
	switch k := g.r.IntN(200); {
	case k < 4:
		s = strings.ReplaceAll(s, "\n", "\r\n")
	case k < 6:
		s = "\xef\xbb\xbf" + s
	case k < 8 && len(s) > 0:
		i := g.r.IntN(len(s))
		s = s[:i] + "\xff" + s[i:]
	case k < 10:
		s = strings.Replace(s, "\n  ", "\n\t", 1)
	case k < 12:
		s = strings.TrimSuffix(s, "\n")
	}
	return []byte(s)
}
