package diff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	goyaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
)

// The tests hold emitYAML to the bytes of goyaml.Marshal, the oracle: where
// emitYAML answers, it must answer exactly that.

// emitCount counts the objects emitYAML wrote and those it left to yaml.v2.
type emitCount struct{ fast, fallback int }

func (c emitCount) String() string {
	return fmt.Sprintf("%d fast, %d fallback", c.fast, c.fallback)
}

// checkEmit compares emitYAML(obj) with goyaml.Marshal(obj) and counts.
func checkEmit(t *testing.T, c *emitCount, name string, obj map[string]any) {
	t.Helper()
	want, err := goyaml.Marshal(obj)
	if err != nil {
		t.Fatalf("%s: goyaml.Marshal: %v", name, err)
	}
	got, ok := emitYAML(obj)
	if !ok {
		c.fallback++
		return
	}
	c.fast++
	if got != string(want) {
		t.Errorf("%s: %#v\n got:\n%s\nwant:\n%s", name, obj, got, want)
	}
}

// nastyStrings are values chosen to trip a YAML emitter.
var nastyStrings = []string{
	// read back as other types, in every spelling yaml.v2 knows
	"", "y", "Y", "yes", "Yes", "YES", "yES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "tRUE",
	"false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL", "nULL",
	"0", "-0", "+0", "1", "-1", "+1", "007", "0x1F", "0X1f", "0o17", "0b101", "-0b101", "0b2", "1_000",
	"1__0", "_1", "9223372036854775807", "9223372036854775808", "18446744073709551616", "-9223372036854775809",
	"1.5", "-1.5", ".5", "-.5", "+.5", "1.", "1e3", "1E3", "1e+3", "1e-3", "1.5e3", "e3", "1e", "0x1p-2",
	".inf", ".Inf", ".INF", "-.inf", "+.inf", ".nan", ".NaN", ".NAN", "inf", "nan", "Infinity", "-Inf",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43Z", "2001-12-14 21:59:43.10",
	"2001-12-14 21:59:43.10 -5", "2001-1-1", "20011-12-14", "2001-13-14", "1:20", "-1:20", "+1:20:30.5",
	"1:60", "190:20:30", "1_0:20", "1:2x", "<<", "<", "=", "==",
	// indicators at the start, inside and at the end
	"-", "--", "---", "----", "--- a", "-x", "- x", "-1x", "--x", "--x=1", "--x y", "--1", "...", "..x", ".x",
	":", ":x", ": x", "x:", "x:y", "x: y", "x :y", "a: b", "a:b:c", "http://example.com:8080/a?b=c#d",
	"#", "#a", "a#b", "a #b", "a\t#b", "a# b", "?", "?x", "? x", "x?", ",", ",x", "x,y", "[", "[x]", "x[0]",
	"]", "{", "{x}", "x{y}", "}", "&", "&a", "a&b", "*", "*a", "a*", "!", "!a", "!!str", "a!", "|", "|a",
	"a|b", ">", ">a", "a>b", "%", "%a", "a%", "@", "@a", "a@b", "`", "`a`", "a`", "'", "'a", "a'", "a'b",
	"''", "\"", "\"a", "a\"", "a\"b", "\\", "a\\b", "\\n", "a=b", "$HOME", "a;b", "(a)", "a/b", "/a", "_a",
	// spaces, tabs and breaks
	" ", "  ", " a", "a ", " a ", "a  b", "a   b", "\t", "\ta", "a\t", "a\tb", "a \tb", "\r", "a\rb",
	"a\r\nb", "\n", "\n\n", "a\n", "a\n\n", "a\n\n\n", "\na", "\n\na", "a\nb", "a\n b", " a\nb", "a \nb",
	"a\n\tb", "a\nb ", "a\nb\n", "# a\nb", "- a\n- b", "a\u2028b", "a\u2029b", "'\n'",
	// beyond ASCII
	"ü", "über", "é1", "Ωmega", "日本語", "\u00a0", "\u00a0a", "a\u00a0", "a\u00a0b", "😀", "a😀", "😀\na",
	"\u200b", "a\ufffdb", "\u0660", "Ⅻ", "ıi",
	// outside the direct subset, but the emitter gets them right
	"\x00", "a\x01", "\x1b[0m", "\x7f", "\u0085", "a\u0085b", "\u009f", "a\ufffe",
}

// longStrings are values long enough for yaml.v2 to wrap, some only just:
// plain, single-quoted (a leading quote, a final ": x", a " #") and
// double-quoted (a tab, an emoji, "yes" is not) ones.
func longStrings() []string {
	words := []string{"a", "bb", "ccc", "dddddddd", "x:y", "ü", "a#b", "日本", "it's"}
	var out []string
	for n := 60; n <= 140; n += 3 {
		for i := range words {
			var b strings.Builder
			for j := 0; b.Len() < n; j++ {
				if j > 0 {
					b.WriteString(strings.Repeat(" ", 1+(i*j)%5/4)) // now and then two spaces
				}
				b.WriteString(words[(i+j)%len(words)])
			}
			s := b.String()
			out = append(out, s, "'"+s, s+": x", s+" #x", "a\t"+s, s+" 😀", s+"\nline")
		}
		out = append(out, strings.Repeat("x", n), strings.Repeat("word ", n/5)+"end", "\t"+strings.Repeat("word ", n/5)+"end")
	}
	return out
}

// placements put a value everywhere an emitter may write it differently:
// under keys of several lengths and depths, in lists, in lists of lists.
func placements(v any) []map[string]any {
	objs := []map[string]any{
		{"k": v},
		{"a": map[string]any{"b": map[string]any{"c": v}}},
		{"list": []any{v}},
		{"list": []any{[]any{v, v}}},
		{"list": []any{map[string]any{"k": v, "l": []any{v}}}},
		{"l": []any{[]any{map[string]any{"k": []any{v}}}}},
	}
	for _, n := range []int{1, 7, 20, 33, 50, 61, 75} {
		objs = append(objs, map[string]any{strings.Repeat("k", n): v},
			map[string]any{"x": []any{map[string]any{strings.Repeat("k", n): v}}})
	}
	return objs
}

func TestEmitYAMLCases(t *testing.T) {
	var c emitCount
	values := []any{nil, true, false, 0, -1, int8(-8), int16(16), int32(-32), int64(1 << 62), int64(-1 << 63),
		uint(7), uint8(255), uint16(65535), uint32(1<<32 - 1), uint64(1<<64 - 1),
		map[string]any{}, []any{}, []any{[]any{}}, []any{map[string]any{}}, map[string]any{"e": map[string]any{}},
		[]any{[]any{[]any{map[string]any{"a": 1, "b": []any{map[string]any{"c": []any{}}}}}}}}
	for _, s := range append(nastyStrings, longStrings()...) {
		values = append(values, s)
	}
	for i, v := range values {
		for j, obj := range placements(v) {
			checkEmit(t, &c, fmt.Sprintf("value %d (%q), placement %d", i, v, j), obj)
		}
	}
	var keys []string
	for _, s := range append(nastyStrings, strings.Repeat("k", 128), strings.Repeat("k", 129),
		strings.Repeat("ü", 64), strings.Repeat("ü", 65), strings.Repeat("word ", 25)+"end") {
		keys = append(keys, s)
		checkEmit(t, &c, fmt.Sprintf("key %q", s), map[string]any{s: 1})
		checkEmit(t, &c, fmt.Sprintf("key %q in a list", s), map[string]any{"l": []any{map[string]any{s: s, "z": 1}}})
	}
	checkEmit(t, &c, "all keys", func() map[string]any {
		m := map[string]any{}
		for i, k := range keys {
			m[k] = i
		}
		return m
	}())
	checkEmit(t, &c, "empty top level", map[string]any{})
	t.Logf("%v", c)

	// Values that must not fall back, so that the emitter cannot quietly
	// stop working.
	for _, v := range []any{"plain", "über", "--flag=x", "a:b", "yes", "", "0x1F", "2001-12-14", "'q'", "a: b",
		"line\nline\n", "  indented\n", "a\tb", "😀", strings.Repeat("long word ", 20), 1, nil} {
		for j, obj := range placements(v) {
			if _, ok := emitYAML(obj); !ok {
				t.Errorf("value %q, placement %d: fell back, want the emitter", v, j)
			}
		}
	}
}

// TestKeyLess checks the key order on every pair of short keys: with two
// keys yaml.v2's order is deterministic and shows its Less.
func TestKeyLess(t *testing.T) {
	alphabet := []string{"a", "B", "ü", "0", "1", "2", "9", "-", "~", " ", "\u0663", "Ⅻ", "😀"}
	keys := []string{""}
	for _, a := range alphabet {
		keys = append(keys, a)
		for _, b := range alphabet {
			keys = append(keys, a+b)
		}
	}
	keys = append(keys, "a01", "a001", "a1", "a10", "a010", "10a", "010a", "a0a", "a00", "1.10", "1.9",
		"v1beta1", "v1alpha2", "v1", "v10", "port80", "port8080", "x99999999999999999999", "x100000000000000000000")
	var c emitCount
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			checkEmit(t, &c, fmt.Sprintf("keys %q, %q", a, b), map[string]any{a: 1, b: 2})
		}
	}
	if c.fallback > c.fast/10 {
		t.Errorf("%v: the order is hardly tested", c)
	}
}

// totalOrder tells whether the keys of every map in v are totally ordered
// by yaml.v2's Less: otherwise its output depends on map iteration order
// (see keyList) and cannot serve as an oracle.
func totalOrder(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		keys := make(keyList, 0, len(x))
		for k, item := range x {
			keys = append(keys, k)
			if !totalOrder(item) {
				return false
			}
		}
		sort.Sort(keys)
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				if !keyLess(keys[i], keys[j]) {
					return false
				}
			}
		}
	case []any:
		for _, item := range x {
			if !totalOrder(item) {
				return false
			}
		}
	}
	return true
}

// TestEmitYAMLGenerated compares generated objects: nasty ones from pieces
// that trip emitters, and tame ones like Kubernetes objects, which must
// nearly all take the fast path. KAPPLY_YAML_OBJECTS sets how many.
func TestEmitYAMLGenerated(t *testing.T) {
	n := 20000
	if s := os.Getenv("KAPPLY_YAML_OBJECTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("KAPPLY_YAML_OBJECTS=%q: %v", s, err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var nasty, tame emitCount
	ambiguous := 0
	for i := range n {
		g, count := generator{rng, nastyPieces, nastyPieces, false}, &nasty
		if i%2 == 1 {
			g, count = generator{rng, tamePieces, tameKeyPieces, true}, &tame
		}
		obj := g.mapping(4)
		if !direct(obj) {
			t.Fatalf("object %d is not in the direct subset: %#v", i, obj)
		}
		if !totalOrder(obj) {
			ambiguous++
			continue
		}
		checkEmit(t, count, fmt.Sprintf("object %d", i), obj)
		if i%10 == 0 {
			want, err := yaml.Marshal(obj)
			got, gotErr := toYAML(obj)
			if err != nil || gotErr != nil || got != string(want) {
				t.Errorf("object %d: toYAML differs from sigs.k8s.io/yaml (%v, %v)\n got:\n%s\nwant:\n%s", i, gotErr, err, got, want)
			}
		}
	}
	t.Logf("nasty: %v; tame: %v; %d skipped, their keys not totally ordered", nasty, tame, ambiguous)
	if tame.fast < 9*(tame.fast+tame.fallback)/10 {
		t.Errorf("tame objects: %v, want at least 90%% fast", tame)
	}
	if nasty.fast < (nasty.fast+nasty.fallback)/5 {
		t.Errorf("nasty objects: %v, want at least 20%% fast", nasty)
	}
	if ambiguous > n/20 {
		t.Errorf("%d of %d objects skipped: the generator makes too many ambiguous keys", ambiguous, n)
	}
}

var nastyPieces = []string{
	"a", "Z", "1", "0", "9", "10", " ", "  ", ":", ": ", "-", "- ", "--", "#", " #", "'", "\"", "\n", "\t", "\r",
	"ü", "é", "😀", "\u00a0", "\u2028", "{", "[", "]", ",", "&", "*", "!", "|", ">", "%", "@", "`", "?",
	".", "e", "+", "~", "_", "0x", "yes", "null", "true", "1e3", "2001-12-14", "1:20", "<<", "...", "/",
	"=", "\\", "word", "longerword",
}

// tamePieces make values like those of Kubernetes objects: names, images,
// flags, numbers and sentences, on one line or several.
var tamePieces = []string{
	"a", "b", "n", "x", "app", "name", "nginx", "-", ".", "/", ":", "=", "_", "0", "1", "8", "80", "v1",
	"kubernetes.io", "http://", "example.com", " ", "/var/run", "--flag=", "Ready", "ü", "1.2.3", "yes",
	"image:tag", "The field's description.", "Lines\nof text\n", "'quoted'", "*", "",
}

var tameKeyPieces = []string{"a", "b", "app", "name", "-", ".", "/", "io", "k8s", "0", "1", "9", "10", "v1", "x"}

// generator makes objects of strings joined from pieces: values from
// values, keys from keys. Tame strings lose the spaces at their ends, which
// Kubernetes values seldom have.
type generator struct {
	rng          *rand.Rand
	values, keys []string
	tame         bool
}

func (g generator) str(pieces []string, maxPieces int) string {
	var b strings.Builder
	for range g.rng.IntN(maxPieces + 1) {
		b.WriteString(pieces[g.rng.IntN(len(pieces))])
	}
	if g.tame {
		return strings.TrimSpace(b.String())
	}
	return b.String()
}

func (g generator) mapping(depth int) map[string]any {
	m := map[string]any{}
	for range g.rng.IntN(6) {
		m[g.str(g.keys, 3)] = g.value(depth - 1)
	}
	return m
}

func (g generator) value(depth int) any {
	kind := g.rng.IntN(10)
	if depth <= 0 {
		kind %= 6
	}
	switch kind {
	case 0:
		return g.str(g.values, 4)
	case 1:
		return g.str(g.values, 40) // long enough to wrap
	case 2:
		return []any{g.rng.Int64N(1<<40) - 1<<39, uint8(g.rng.IntN(256)), g.rng.IntN(100)}[g.rng.IntN(3)]
	case 3:
		return g.rng.IntN(2) == 0
	case 4:
		return nil
	case 5:
		return []any{map[string]any{}, []any{}}[g.rng.IntN(2)]
	case 6, 7:
		return g.mapping(depth)
	default:
		list := []any{}
		for range 1 + g.rng.IntN(3) {
			list = append(list, g.value(depth-1))
		}
		return list
	}
}

// TestEmitYAMLConcurrent encodes objects on several goroutines, with a
// style cache small enough to be emptied all the time, and compares with
// yaml.v2 (run with -race).
func TestEmitYAMLConcurrent(t *testing.T) {
	defer func(old int64) { styleCacheMax = old }(styleCacheMax)
	styleCacheMax = 8
	rng := rand.New(rand.NewPCG(3, 5))
	var objects []map[string]any
	var wants []string
	for len(objects) < 200 {
		obj := generator{rng, tamePieces, tameKeyPieces, true}.mapping(4)
		if !totalOrder(obj) {
			continue
		}
		want, err := goyaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		objects, wants = append(objects, obj), append(wants, string(want))
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(objects)*4)
	for w := range 4 {
		wg.Go(func() {
			for i := range objects {
				i = (i + w*50) % len(objects)
				if got, err := toYAML(objects[i]); err != nil || got != wants[i] {
					errs <- fmt.Sprintf("object %d: %v\n got:\n%s\nwant:\n%s", i, err, got, wants[i])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// manifests returns the objects of the YAML documents under dir, read as
// the diff reads them (YAML to JSON to map).
func manifests(t testing.TB, dir string) []map[string]any {
	var objects []map[string]any
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			js, err := utilyaml.ToJSON([]byte(doc))
			if err != nil || string(js) == "null" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err == nil {
				objects = append(objects, u.Object)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	return objects
}

// TestEmitYAMLManifests compares real manifests: this repository's and,
// where present, those of the real-world corpus.
func TestEmitYAMLManifests(t *testing.T) {
	dirs := []string{"../../testdata"}
	if realWorld, err := fixture.FindRealWorld(); err == nil {
		dirs = append(dirs, realWorld)
	} else {
		t.Log(err)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("skipping %s: %v", dir, err)
			continue
		}
		var c emitCount
		for i, obj := range manifests(t, dir) {
			if direct(obj) {
				checkEmit(t, &c, fmt.Sprintf("%s object %d", dir, i), obj)
			}
		}
		t.Logf("%s: %v", dir, c)
		if c.fast == 0 || c.fast < 9*(c.fast+c.fallback)/10 {
			t.Errorf("%s: %v, want at least 90%% fast", dir, c)
		}
	}
}

// FuzzYAMLEmit places a key and a value where the emitter writes them
// differently: shape picks the nesting, pad the key's length.
func FuzzYAMLEmit(f *testing.F) {
	for _, s := range []string{"a", "yes", "a: b", "'x'", "a\nb", " a\n", "😀 x", "0x1F", "a01"} {
		f.Add("k", s, uint8(0), uint8(1))
		f.Add(s, strings.Repeat(s+" ", 30), uint8(3), uint8(40))
	}
	f.Fuzz(func(t *testing.T, key, value string, shape, pad uint8) {
		var v any = value
		if shape&4 != 0 {
			v = map[string]any{key: value, value: key}
		}
		k := strings.Repeat("p", int(pad%100)) + key
		var obj map[string]any
		switch shape % 4 {
		case 0:
			obj = map[string]any{k: v}
		case 1:
			obj = map[string]any{"l": []any{v, map[string]any{k: v}}}
		case 2:
			obj = map[string]any{"a": map[string]any{k: []any{[]any{v}}}}
		default:
			obj = map[string]any{k: v, key: []any{v}}
		}
		if !direct(obj) {
			return
		}
		checkEmit(t, new(emitCount), "fuzz", obj)
	})
}

// BenchmarkToYAML measures toYAML against yaml.v2 alone (what it did
// before) on a Deployment and a ConfigMap.
func BenchmarkToYAML(b *testing.B) {
	objects := map[string]map[string]any{
		"deployment": benchDeployment(),
		"configmap": {
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "app-config", "namespace": "shop", "labels": map[string]any{"app": "shop"}},
			"data": map[string]any{
				"LOG_LEVEL": "info", "PORT": "8080", "FEATURE_X": "true", "DATABASE_URL": "postgres://db.shop.svc:5432/shop",
				"app.properties": "server.port=8080\nserver.host=0.0.0.0\ncache.size=256\nfeature.flags=a,b,c\n",
				"nginx.conf":     "server {\n  listen 80;\n  location / {\n    proxy_pass http://127.0.0.1:8080;\n  }\n}\n",
			},
		},
	}
	for _, name := range []string{"deployment", "configmap"} {
		obj := objects[name]
		if !direct(obj) {
			b.Fatalf("%s is not encoded directly", name)
		}
		if _, ok := emitYAML(obj); !ok {
			b.Fatalf("%s falls back to yaml.v2", name)
		}
		b.Run(name+"/goyaml", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := goyaml.Marshal(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/sigsyaml", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := yaml.Marshal(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/toYAML", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := toYAML(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchDeployment() map[string]any {
	container := func(name, image string, port int64) map[string]any {
		return map[string]any{
			"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
			"args":  []any{"--port=" + strconv.FormatInt(port, 10), "--log-level=info", "--config=/etc/app/config.yaml"},
			"ports": []any{map[string]any{"name": "http", "containerPort": port, "protocol": "TCP"}},
			"env": []any{
				map[string]any{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
				map[string]any{"name": "MODE", "value": "production"},
				map[string]any{"name": "REPLICAS", "value": "3"},
			},
			"resources": map[string]any{
				"limits":   map[string]any{"cpu": "500m", "memory": "256Mi"},
				"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": "http"}, "periodSeconds": int64(10)},
			"volumeMounts":   []any{map[string]any{"name": "config", "mountPath": "/etc/app", "readOnly": true}},
		}
	}
	labels := map[string]any{"app.kubernetes.io/name": "shop", "app.kubernetes.io/instance": "shop-prod", "app.kubernetes.io/version": "1.4.2"}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "shop", "namespace": "shop", "labels": labels,
			"annotations": map[string]any{
				"deployment.kubernetes.io/revision": "7",
				"description":                       "The shop front end, serving the catalogue and the basket to customers of every region.",
			},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": labels},
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0)}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"serviceAccountName": "shop",
					"containers":         []any{container("web", "registry.example.com/shop/web:1.4.2", 8080), container("sidecar", "envoyproxy/envoy:v1.30.1", 9901)},
					"volumes":            []any{map[string]any{"name": "config", "configMap": map[string]any{"name": "app-config"}}},
				},
			},
		},
	}
}
