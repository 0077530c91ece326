package load

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"go.yaml.in/yaml/v2"

	"github.com/kapply/kapply/internal/fixture"
)

// The tests of fastYAML are differential: the oracle is the path it
// shortcuts, jsonValue of yaml.UnmarshalStrict. Wherever fastYAML answers,
// the strict parse must succeed and give the same value, Go types
// included; where it does not, yamlObject runs that path itself.

// fastYAMLDiff says how fastYAML's answer for doc differs from the strict
// parse's ("" when alike), and whether fastYAML answered.
func fastYAMLDiff(doc []byte) (fast bool, diff string) {
	got, ok := fastYAML(doc)
	if !ok {
		return false, ""
	}
	var v any
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		return true, fmt.Sprintf("fastYAML reads %#v, the strict parse fails: %v", got, err)
	}
	if v == nil {
		if got != nil {
			return true, fmt.Sprintf("fastYAML reads %#v, the strict parse null", got)
		}
		return true, ""
	}
	if _, isMap := v.(map[any]any); !isMap {
		return true, fmt.Sprintf("fastYAML reads %#v, the strict parse %#v", got, v)
	}
	want, why := jsonValue(v, 0)
	switch {
	case why != "":
		return true, fmt.Sprintf("fastYAML reads %#v, jsonValue refuses the strict parse's: %s", got, why)
	case !reflect.DeepEqual(any(got), want):
		return true, fmt.Sprintf("fastYAML reads\n%#v\nthe strict parse\n%#v", got, want)
	}
	return true, ""
}

// TestFastYAMLScenarios: the edges of what fastYAML follows, each compared
// with the strict parse, and whether fastYAML follows it.
func TestFastYAMLScenarios(t *testing.T) {
	for _, tc := range []struct {
		doc    string
		follow bool
	}{
		{"", true},
		{"# only a comment\n", true},
		{"---\n# c\n", true},
		{"--- # c\na: 1\n", true},
		{"a: 1\nb: -7\nc: 0\nd: -0\ne: 999999999999999999\n", true},
		{"a: 1.5\nb: 1e3\nc: 0x1F\nd: 017\ne: 1_000\nf: +1\ng: 9223372036854775808\nh: 1:20\n", true},
		{"a: 2001-12-14\nb: 2001-12-14T21:59:43Z\nc: 100m\nd: 1.2.3\ne: .5\n", true},
		{"a: .inf\n", false}, // jsonValue refuses it
		{"a: yes\nb: No\nc: ON\nd: y\ne: ~\nf: null\ng: NULL\nh: nULL\ni: yEs\nj:\nk: <<\n", true},
		{"a: 'it''s'\nb: \"x: y # z\"\nc: ''\nd: '#'\ne: 'a' # c\n", true},
		{`a: "esc\n\t\"\\\'\0\a\b\v\f\r\e\N\_\L\P"` + "\n", true},
		{"a: \"x\\n \n\n  \\ty \\\"\"\n", true},
		{`a: ["x\"y", "\n"]` + "\n", true},
		{`a: "x\x41"`, false},
		{`a: "x\u00e9"`, false},
		{`a: "x\/"`, false}, // yaml.v2's error
		{`a: "x\ "`, false},
		{`a: "x\q"`, false},
		{"a: \"x\\\n  y\"\n", false}, // an escaped line break
		{"a: 'x'y\n", false},
		{"a: []\nb: {}\nc: [] # c\nd: [ ]\n", true},
		{"a: [x]\nb: [ 1 ,yes, 'it''s', \"-g\", 1e3, 0x1F, x.y/z] # c\n", true},
		{"a: [x,]\n", false},
		{"a: [x, [y]]\n", false},
		{"a: [x: y]\n", false},
		{"a: [-x]\n", false},
		{"a: {x: y}\n", false},
		{"a: [x] y\n", false},
		{"a: b # c\nd: e#f\ng: h  \n", true},
		{"a: b: c\n", false},
		{"a: b:\n", false},
		{"a: http://x:80/y?z=1&w\nb: ::1\nc: -x\nd: $(VAR)\ne: /p\n", true},
		{"a: - x\n", false},
		{"a: &x 1\n", false},
		{"a: *x\n", false},
		{"a: !!str 1\n", false},
		{"a: >\n  x\n", false},
		{"a: |\n  x\n  y\n\n", true},
		{"a: |-\n  x\n\n  y\n   z\nb: 1\n", true},
		{"a: |\n\n  x\n    \n  # not a comment\nb: |\n  y", true},
		{"a: |\n  x\n# c\nb: 1\n", true},
		{"a: |\n    x\n  y\n", false},
		{"a: |+\n  x\n", false},
		{"a: |2\n  x\n", false},
		{"a: |\nb: 1\n", false},
		{"a: plain\n  over\n\n  lines\nb: 1\n", true},
		{"a: plain\n  over: lines\n", false},
		{"a: 1\n  2\n", true},
		{"a: 'quoted\n  over\n\n   lines  '\n", true},
		{"- a\n- b\n", false},
		{"a:\n- x\n- k: 1\n  z: 2\n- - n\n  - m\nb: 1\n", true},
		{"a:\n  - x\n  -   k: 1\n      z: 2\n", true},
		{"a:\n- y: 1\n", false}, // y is true
		{"a:\n  -\n    b: 1\n", false},
		{"a:\n  b: 1\n c: 2\n", false},
		{"a: 1\na: 2\n", false},
		{"a:\n  b: 1\nc:\n  b: 2\n", true},
		{"yes: 1\n", false},
		{"'a': 1\n", false},
		{"? a\n: 1\n", false},
		{"a:\tb\n", false},
		{"a: b\r\n", false},
		{"a: b\n...\n", false},
		{"a: b\n---\nc: d\n", false},
		{"  a: 1\n  b: 2\n", true},
		{"a: \u00e9\u65e5\nb: caf\u00e9\n", true},
		{"a: b\u0085c\n", false},
		{"\ufeffa: b\n", false},
		{"a: " + strings.Repeat("x", 5000) + "\n", true},
		{strings.Repeat("k", 600) + ": 1\n", false},
	} {
		fast, diff := fastYAMLDiff([]byte(tc.doc))
		if diff != "" {
			t.Errorf("%q: %s", tc.doc, diff)
		}
		if fast != tc.follow {
			t.Errorf("%q: fastYAML follows it: %v, want %v", tc.doc, fast, tc.follow)
		}
	}
}

// TestFastYAMLCorpus: every document of the real-world manifests, of the
// repository's testdata and of the benchmark's templates. fastYAML must
// follow nearly all of them, and all of the benchmark's: were it to fall
// back on all, the other tests would still pass.
func TestFastYAMLCorpus(t *testing.T) {
	corpora := map[string][][]byte{
		"real-world": realWorldDocuments(t),
		"testdata":   corpusDocuments(t, "../../testdata"),
		"benchmark":  benchDocuments(t),
	}
	for name, docs := range corpora {
		fast, bytesAll, bytesFast := 0, 0, 0
		for _, doc := range docs {
			followed, diff := fastYAMLDiff(doc)
			if diff != "" {
				t.Errorf("%s: %s\n%s", name, diff, doc)
			}
			bytesAll += len(doc)
			if followed {
				fast++
				bytesFast += len(doc)
			}
		}
		t.Logf("%s: fastYAML follows %d of %d documents (%d of %d bytes)", name, fast, len(docs), bytesFast, bytesAll)
		if len(docs) == 0 && name != "real-world" {
			t.Errorf("%s: no documents", name)
		}
		want := len(docs) * 9 / 10
		if name == "benchmark" {
			want = len(docs)
		}
		if fast < want {
			t.Errorf("%s: fastYAML follows %d documents of %d, want %d at least", name, fast, len(docs), want)
		}
	}
}

// corpusDocuments are the non-empty YAML documents of the files under root
// (JSON and compressed files left out).
// realWorldDocuments are the documents of the real-world corpus; none, and
// a line in the log, when it is absent: the other corpora still count.
func realWorldDocuments(t *testing.T) [][]byte {
	root, err := fixture.FindRealWorld()
	if err != nil {
		t.Log(err)
		return nil
	}
	return corpusDocuments(t, root)
}

func corpusDocuments(t *testing.T, root string) [][]byte {
	var docs [][]byte
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		split, err := splitDocuments(data)
		if err != nil {
			return fmt.Errorf("splitting %s: %w", path, err)
		}
		for _, doc := range split {
			if !isEmptyDocument(doc) {
				docs = append(docs, doc)
			}
		}
		return nil
	})
	if os.IsNotExist(err) {
		t.Logf("no corpus at %s: %v", root, err)
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// benchDocuments renders each of hack/bench's manifest templates (read
// from its source, so that they cannot drift), with its CRD.
func benchDocuments(t testing.TB) [][]byte {
	file, err := parser.ParseFile(token.NewFileSet(), "../../hack/bench/gen.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	ast.Inspect(file, func(n ast.Node) bool {
		if spec, ok := n.(*ast.ValueSpec); ok && len(spec.Values) == 1 {
			if lit, ok := spec.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("reading hack/bench's %s: %v", spec.Names[0].Name, err)
				}
				consts[spec.Names[0].Name] = text
			}
		}
		return true
	})
	tmpl, err := template.New("manifests").Parse(consts["manifestTemplates"])
	if err != nil || consts["crdManifest"] == "" {
		t.Fatalf("reading hack/bench's templates: %v", err)
	}
	docs := [][]byte{[]byte(consts["crdManifest"])}
	for _, kind := range []string{"namespace", "widget", "configmap", "deployment", "service"} {
		for i, gen := range []int{0, 7, 12} {
			var b bytes.Buffer
			obj := map[string]any{"Name": fmt.Sprintf("app-%04d", i*37), "Namespace": "bench-3", "Index": i * 37, "Gen": gen}
			if err := tmpl.ExecuteTemplate(&b, kind, obj); err != nil {
				t.Fatalf("rendering %s: %v", kind, err)
			}
			docs = append(docs, b.Bytes())
		}
	}
	return docs
}

// fastYAMLDocuments is how many generated and how many mutated documents
// TestFastYAMLGenerated reads: KAPPLY_FASTYAML_DOCS, or 20,000 each (4000
// with -short or the race detector).
func fastYAMLDocuments() int {
	n := 20000
	if !thorough() {
		n = 4000
	}
	if s := os.Getenv("KAPPLY_FASTYAML_DOCS"); s != "" {
		fmt.Sscan(s, &n)
	}
	return n
}

// TestFastYAMLGenerated: generated block documents, heavy in the scalars
// YAML 1.1 reads as something else than a string and in indentation
// variants, and mutations of real-world and generated documents.
func TestFastYAMLGenerated(t *testing.T) {
	n := fastYAMLDocuments()
	g := &blockGen{r: rand.New(rand.NewPCG(21, 22))}
	seeds := realWorldDocuments(t)
	seeds = append(seeds, benchDocuments(t)...)
	for range 300 {
		seeds = append(seeds, []byte(g.document()))
	}
	r := rand.New(rand.NewPCG(23, 24))
	hostile := &yamlGen{r: rand.New(rand.NewPCG(25, 26))}
	failures := 0
	check := func(what string, doc []byte) bool {
		fast, diff := fastYAMLDiff(doc)
		if diff != "" && failures < 10 {
			failures++
			t.Errorf("%s %q: %s", what, doc, diff)
		}
		return fast
	}
	generated, fast := 0, 0
	for i := range n {
		doc := g.document()
		if i%10 == 0 {
			doc = hostile.document() // flow style, anchors, tags: mostly left to yaml.v2
		}
		generated++
		if check("generated", []byte(doc)) {
			fast++
		}
	}
	mutated, mutatedFast := 0, 0
	for range n {
		seed := seeds[r.IntN(len(seeds))]
		if len(seed) > 4096 {
			// A window of a large document, from a line's start.
			start := r.IntN(len(seed) - 2048)
			start += bytes.IndexByte(seed[start:], '\n') + 1
			seed = seed[start:min(len(seed), start+2048)]
		}
		var doc []byte
		if r.IntN(2) == 0 {
			doc = []byte(mutate(r, string(seed)))
		} else {
			doc = mutateBytes(r, seed)
		}
		mutated++
		if check("mutated", doc) {
			mutatedFast++
		}
	}
	t.Logf("fastYAML follows %d of %d generated documents, %d of %d mutated ones", fast, generated, mutatedFast, mutated)
	if fast < generated/3 || mutatedFast < mutated/5 {
		t.Errorf("fastYAML follows too few documents for the test to check it")
	}
}

// mutateBytes flips, inserts or deletes a few bytes of doc, most of them
// among those YAML gives a meaning to.
func mutateBytes(r *rand.Rand, doc []byte) []byte {
	const meaningful = " \n-:#'\"|>[]{}&*!?,.~0123456789yYnN\t\r\\"
	out := bytes.Clone(doc)
	for range 1 + r.IntN(3) {
		c := meaningful[r.IntN(len(meaningful))]
		i := r.IntN(len(out) + 1)
		switch r.IntN(3) {
		case 0:
			out = append(out[:i:i], append([]byte{c}, out[i:]...)...)
		case 1:
			if i < len(out) {
				out[i] = c
			}
		default:
			if i < len(out) {
				out = append(out[:i:i], out[i+1:]...)
			}
		}
	}
	return out
}

// blockGen writes random block documents: maps and sequences at varying
// indentation, one-line, multi-line and block scalars, flow sequences,
// comments, blank lines and trailing spaces, keys and scalars that YAML
// 1.1 reads in surprising ways. Each document draws what fastYAML does
// not follow (the bad lists) at a rate of its own, from never to often.
type blockGen struct {
	r   *rand.Rand
	b   strings.Builder
	bad float64
}

var (
	goodKeys = []string{"a", "b", "c", "name", "kind", "apiVersion", "metadata", "items", "x.y/z", "k8s.io/name",
		"_x", "a-b", "a1", "True_", "A"}
	badBlockKeys = []string{"yES", "nULL", "Yes", "y", "N", "null", "on", "True", "1", "'q'", `"q"`, "<<", "? a", "a b", "\u00e9",
		"a:b", "-a", "- a", strings.Repeat("k", 700), "a :"}
	goodScalars = []string{
		// YAML 1.1 booleans and nulls, every spelling and some near ones
		"y", "Y", "yes", "Yes", "YES", "yEs", "n", "N", "no", "No", "NO", "nO", "true", "True", "TRUE", "tRUE",
		"false", "False", "FALSE", "on", "On", "ON", "oN", "off", "Off", "OFF", "null", "Null", "NULL", "nULL",
		"~", "~x", "<<", "=", "yes!", "nono",
		// numbers of every form
		"0", "-0", "+0", "1", "-1", "+1", "00", "007", "08", "09", "0x1F", "0X1F", "-0x1F", "0x", "0o17", "0b101",
		"-0b101", "0b", "1_000", "1__0", "_1", "1_", "0x_1", "1e3", "1E3", "1e+3", "1e-3", "1.5", "-1.5", ".5", "-.5",
		"+.5", "5.", "1.0", "-0.0", "1.", ".", "-.", "1e", ".iNf", "1:20", "1:20:30", "-1:20", "190:20:30.15",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "999999999999999999", "1000000000000000000",
		"123456789012345678901234567890", "1e21", "1e20", "0.1", "1.2.3", "v1", "100m", "64Mi", "1Gi", "12:30",
		"0b2", "0o8", "0xg",
		// timestamps
		"2001-12-14", "2001-12-14T21:59:43Z", "2001-1-2", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
		"2001-13-14", "20011-12-14",
		// strings
		"x", "hello world", "a#b", "a #b", "a:b", "http://x:80/y?z=1", "::1", "?x", ":x", "-x", "--x", "---",
		"\u00e9", "\u65e5\u672c", `a'b`, `a"b`, `a\b`, "$(VAR)", "/path", "a,b", "a [b] {c}",
		// quoted
		`'x'`, `''`, `'it''s'`, `''''`, `"x"`, `""`, `"a: b"`, `"x # y"`, `"yes"`, `'1'`, `'#x'`, `'a' # c`,
		`"a\tb"`, `"\n"`, `"x\\"`, `"\""`, `"\N\_\L\P\0\a\b\v\f\r\e"`, `"it\'s"`, `"a\\ b"`,
		// flow
		"[]", "{}", "[ ]", "[a]", "[a, b]", `[1, 2.5, yes, ~, 'q', "r"]`, "[x.y/z,a_b]",
	}
	badBlockScalars = []string{".inf", "-.inf", "+.inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", "1e400", "a: b",
		"a:", "- x", "-", "?", ":", "@x", "`x", "%x", "!x", "&a x", "*a", "{a: 1}", "[] x", "|", ">", "|-", "#",
		`"\x41"`, `"\u00e9"`, `"\/"`, `"\ "`, `"\q"`, `"a\`, `'unclosed`, `'a'b`, `"a"#c`, `'a'#c`, "[a,]", "[[a]]", "[a: b]", "[-a]", "[a", "x\u0085y"}
	goodDecorations = []string{"", "", "", "", "", "", " ", "  ", " # c", " #", " # a: b"}
	badDecorations  = []string{"\t", "\r", ":", ": x"}
)

// pick draws from good, or from bad at the document's rate.
func (g *blockGen) pick(good, bad []string) string {
	if len(bad) > 0 && g.chance(g.bad) {
		return bad[g.r.IntN(len(bad))]
	}
	return good[g.r.IntN(len(good))]
}

func (g *blockGen) chance(p float64) bool { return g.r.Float64() < p }

// document is a random document, most often a map.
func (g *blockGen) document() string {
	g.b.Reset()
	g.bad = []float64{0, 0, 0.003, 0.01, 0.05}[g.r.IntN(5)]
	g.b.WriteString(g.pick([]string{"", "", "", "", "---\n", "--- # c\n", "# c\n---\n"},
		[]string{"---x\n", "--- a\n", "...\n", "%YAML 1.1\n---\n"}))
	col := 0
	if g.chance(0.05) {
		col = 1 + g.r.IntN(3)
	}
	if g.chance(0.03) {
		g.sequence(col, 3, "")
	} else {
		g.mapping(col, 4, "")
	}
	s := g.b.String()
	if g.chance(0.1) {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// line writes one line at col (or after prefix, the "- " of an item),
// then blank lines and comments now and then.
func (g *blockGen) line(col int, prefix, text string) {
	if prefix == "" {
		prefix = strings.Repeat(" ", col)
	}
	g.b.WriteString(prefix + text + "\n")
	for g.chance(0.08) {
		switch g.r.IntN(4) {
		case 0:
			g.b.WriteString("\n")
		case 1:
			g.b.WriteString(strings.Repeat(" ", g.r.IntN(8)) + "\n")
		default:
			g.b.WriteString(strings.Repeat(" ", g.r.IntN(8)) + "# comment: x\n")
		}
	}
}

// step is how much deeper a nested block is indented: mostly 2, at times
// 1 or 4, and now and then not deeper.
func (g *blockGen) step() int {
	if g.chance(g.bad) {
		return 0
	}
	switch k := g.r.IntN(10); {
	case k == 0:
		return 1
	case k < 3:
		return 4
	}
	return 2
}

func (g *blockGen) scalar() string {
	return g.pick(goodScalars, badBlockScalars) + g.pick(goodDecorations, badDecorations)
}

// mapping writes a map whose keys are at col, the first after prefix.
func (g *blockGen) mapping(col, depth int, prefix string) {
	for i := range 1 + g.r.IntN(5) {
		if i > 0 {
			prefix = ""
		}
		key := g.pick(goodKeys, badBlockKeys)
		if g.chance(0.8) {
			key += strconv.Itoa(i) // a key set twice now and then, not always
		}
		switch k := g.r.IntN(10); {
		case depth <= 0 || k < 5:
			g.line(col, prefix, key+": "+g.scalar())
		case k == 5:
			g.line(col, prefix, key+":"+g.pick([]string{"", " # c", " "}, nil))
		case k == 6:
			g.line(col, prefix, key+":")
			g.mapping(col+g.step(), depth-1, "")
		case k == 7:
			g.line(col, prefix, key+":")
			if g.chance(0.5) {
				g.sequence(col, depth-1, "")
			} else {
				g.sequence(col+g.step(), depth-1, "")
			}
		default:
			g.line(col, prefix, key+": "+g.multiline(col))
		}
	}
}

// sequence writes a list whose "- " are at col, the first after prefix.
func (g *blockGen) sequence(col, depth int, prefix string) {
	for i := range 1 + g.r.IntN(4) {
		if i > 0 || prefix == "" {
			prefix = strings.Repeat(" ", col)
		}
		dash := "- "
		if g.chance(0.2) {
			dash = "-" + strings.Repeat(" ", 1+g.r.IntN(3))
		}
		item := col + len(dash)
		switch k := g.r.IntN(10); {
		case depth <= 0 || k < 4:
			g.line(col, prefix+dash, g.scalar())
		case k < 7:
			g.mapping(item, depth-1, prefix+dash)
		case k == 7:
			g.sequence(item, depth-1, prefix+dash)
		case k == 8 && g.chance(g.bad*10):
			g.line(col, prefix, "-"+g.pick([]string{"", " # c"}, nil))
			g.mapping(col+g.step(), depth-1, "")
		default:
			g.line(col, prefix+dash, g.multiline(col))
		}
	}
}

// multiline is a value over several lines, for a collection at col: a
// block scalar, a plain or quoted scalar, with lines indented at random.
func (g *blockGen) multiline(col int) string {
	header := g.pick([]string{"|", "|", "|-", "|-", "| # c", "plain", "'quoted", `"dquoted`, "'it''s"},
		[]string{"|+", ">", "|2", "|#c", "|x", ">-"})
	quoted := header[0] == '\'' || header[0] == '"'
	var b strings.Builder
	b.WriteString(header)
	indent := col + 1 + g.r.IntN(3)
	for range 1 + g.r.IntN(4) {
		b.WriteString("\n")
		switch k := g.r.IntN(10); {
		case k == 0:
			// a blank line, with spaces or not
			b.WriteString(strings.Repeat(" ", g.r.IntN(indent+3)))
		case k == 1 && g.chance(g.bad*10):
			b.WriteString(strings.Repeat(" ", max(0, indent-1-g.r.IntN(2))) + g.scalar())
		default:
			extra := 0
			if g.chance(0.2) {
				extra = 1 + g.r.IntN(3)
			}
			b.WriteString(strings.Repeat(" ", indent+extra) + g.pick(goodScalars, badBlockScalars))
			if !quoted {
				b.WriteString(g.pick(goodDecorations, badDecorations))
			}
		}
	}
	if quoted {
		if !g.chance(g.bad * 5) {
			b.WriteString(header[:1])
		}
		b.WriteString(g.pick(goodDecorations, badDecorations))
	}
	return b.String()
}

// FuzzFastYAML: wherever fastYAML answers, it answers as the strict parse.
func FuzzFastYAML(f *testing.F) {
	for _, doc := range benchDocuments(f) {
		f.Add(doc)
	}
	g := &blockGen{r: rand.New(rand.NewPCG(1, 2))}
	for range 50 {
		f.Add([]byte(g.document()))
	}
	f.Add([]byte("a: |\n  x\n\n  y\nb: 'c\n  d'\ne: f\n  g\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, diff := fastYAMLDiff(doc); diff != "" {
			t.Errorf("%q: %s", doc, diff)
		}
	})
}

// BenchmarkYAMLObject: yamlObject on the benchmark's Deployment and
// ConfigMap, through fastYAML and through yaml.v2 (the path it
// shortcuts).
func BenchmarkYAMLObject(b *testing.B) {
	docs := benchDocuments(b)
	for _, name := range []string{"configmap", "deployment"} {
		var doc []byte
		for _, d := range docs {
			if bytes.Contains(d, []byte("kind: "+map[string]string{"configmap": "ConfigMap", "deployment": "Deployment"}[name]+"\n")) {
				doc = d
				break
			}
		}
		b.Run(name+"/yaml.v2", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, why := yamlMap(doc)
				if _, why2 := mapObject(m); why != "" || why2 != "" {
					b.Fatal(why, why2)
				}
			}
		})
		b.Run(name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if obj, why := yamlObject(doc); obj == nil || why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
