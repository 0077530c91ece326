package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	runtimeobj "k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Hostile inputs: files written to find where readLocal and the resource
// builder part — YAML 1.1 scalars and tags, anchors and merge keys, keys
// that are not strings, separators and document ends, byte order marks,
// line ends, JSON streams, Lists and their items, metadata of every shape,
// namespaces, selectors, and the walk of directories — each compared with
// the builder (compareWithBuilder), then mutated at random.

// diffWithBuilder is compareWithBuilder that reports the first difference
// instead of failing: "" when readLocal gives what the builder gives.
func diffWithBuilder(files Files, selector string) string {
	if _, ok := listInputs(files); !ok {
		return ""
	}
	if _, err := labels.Parse(strings.TrimSpace(selector)); err != nil {
		return ""
	}
	got := loadAsBinary(files, selector)
	infos, errs, checked := got.infos, got.errs, got.checked
	wantInfos, wantErrs := build(testGetter, files, selector)
	if len(infos) != len(wantInfos) {
		return fmt.Sprintf("%d infos, the builder %d", len(infos), len(wantInfos))
	}
	for i, g := range infos {
		w := wantInfos[i]
		if g.Source != w.Source || g.Namespace != w.Namespace || g.Name != w.Name || g.ResourceVersion != w.ResourceVersion ||
			!reflect.DeepEqual(g.Object, w.Object) {
			return fmt.Sprintf("info %d:\nreadLocal: %s %q/%q rv %q %#v\nbuilder:   %s %q/%q rv %q %#v",
				i, g.Source, g.Namespace, g.Name, g.ResourceVersion, g.Object, w.Source, w.Namespace, w.Name, w.ResourceVersion, w.Object)
		}
	}
	text := func(errs []error) []string {
		var s []string
		for _, err := range errs {
			s = append(s, err.Error())
		}
		return s
	}
	if g, w := text(errs), text(wantErrs); !slices.Equal(g, w) {
		return fmt.Sprintf("errors:\nreadLocal: %q\nbuilder:   %q", g, w)
	}
	reread := map[string][]lossyDocument{}
	for source, lossy := range checked {
		reread[source] = lossyDocumentsAgain(source)
		l := func(docs []lossyDocument) string {
			var s []string
			for _, d := range docs {
				s = append(s, fmt.Sprintf("%d %v", d.n, d.err))
			}
			return strings.Join(s, "; ")
		}
		if g, w := l(lossy), l(reread[source]); g != w {
			return fmt.Sprintf("%s: refused documents %q, reading again %q", source, g, w)
		}
	}
	objects, loadErrs := got.objects, got.loadErrs
	wantObjects, wantLoadErrs := objectsOfInfos(wantInfos, wantErrs, reread)
	if len(objects) != len(wantObjects) {
		return fmt.Sprintf("Load: %d objects, the builder's load %d", len(objects), len(wantObjects))
	}
	for i, o := range objects {
		w := wantObjects[i]
		if o.Source != w.Source || o.Index != w.Index || !reflect.DeepEqual(o.Obj, w.Obj) {
			return fmt.Sprintf("Load: object %d: %s #%d %v, the builder's load %s #%d %v", i, o.Source, o.Index, o.Obj, w.Source, w.Index, w.Obj)
		}
	}
	if g, w := text(loadErrs), text(wantLoadErrs); !slices.Equal(g, w) {
		return fmt.Sprintf("Load errors:\nreadLocal: %q\nbuilder:   %q", g, w)
	}
	return ""
}

// builderStable tells whether the builder gives one answer for files: it
// does not when a map holds two keys that become one string (either value
// is kept, by map order).
func builderStable(files Files, selector string) bool {
	text := func() string {
		infos, errs := build(testGetter, files, selector)
		var b strings.Builder
		for _, info := range infos {
			fmt.Fprintf(&b, "%s %q %q %q %v\n", info.Source, info.Namespace, info.Name, info.ResourceVersion, info.Object)
		}
		fmt.Fprint(&b, errs)
		return b.String()
	}
	first := text()
	for range 8 {
		if text() != first {
			return false
		}
	}
	return true
}

// colliding tells whether the file at path holds a map with two keys that
// become one string: the builder has no one answer for it.
func colliding(path string) bool {
	return readFiles(context.Background(), testGetter, fileInputs([]string{path}), Files{}, nil, "")[0].fallback == fallbackCollide
}

const cm = "apiVersion: v1\nkind: ConfigMap\n"

// hostileDocuments are single files, by name.
var hostileDocuments = map[string]string{
	// YAML 1.1 scalars as values and as keys.
	"numbers.yaml": cm + "metadata: {name: n}\ndata: {a: 0o17, b: 017, c: 0x1F, d: 1_000, e: 1:20, f: -0, g: 1e3, h: 1.0, i: 99999999999999999999, " +
		"j: -99999999999999999999, k: 0.1e-7, l: +.5, m: 0b1_0, n: 190:20:30, o: -0b11, p: 0x_1F, q: 1__0, r: 0.0, s: -.0, t: 1e-400, u: 2e308, v: 0x8000000000000000, w: -0x8000000000000000, x: 0xFFFFFFFFFFFFFFFF, y: 0x10000000000000000}\n",
	"bools.yaml": cm + "metadata: {name: b}\ndata: {a: yes, b: No, c: ON, d: off, e: y, f: N, g: True, h: TRUE, i: tRUE, j: YES, k: Off, l: nO, m: ~, n: Null, o: NULL, p: nULL}\n",
	"timestamps.yaml": cm + "metadata: {name: t, creationTimestamp: 2001-12-14}\ndata: {a: 2001-12-14, b: 2001-12-14t21:59:43.10-05:00, c: 2001-12-14 21:59:43.10 -5, d: !!timestamp 2001-12-14, " +
		"e: !!timestamp '2001-12-14', f: 2001-12-14T21:59:43Z, g: 20011214}\n",
	"numkeys.yaml": cm + "metadata: {name: k}\ndata: {1: a, -1: b, 0x10: c, 1.5: d, 1e3: e, 2001-12-14: f, true: g, no: h, .inf: i, -.inf: j, 123456789012: k, " +
		"12345678901234567890: l}\n",
	"hugekeyneg.yaml":   cm + "metadata: {name: k}\ndata: {-12345678901234567890: l}\n",
	"floatkeys.yaml":    cm + "metadata: {name: k}\ndata: {0.1: a, 1e20: b, 1e-7: c, 3.4028235e38: d, 3.5e38: e, 5e-324: g, -0.0: h}\n",
	"nankey.yaml":       cm + "metadata: {name: k}\ndata: {.nan: a}\n",
	"nullkey.yaml":      cm + "metadata: {name: k}\ndata: {~: a}\n",
	"emptykey.yaml":     cm + "metadata: {name: k}\ndata: {'': a, \"\": b}\n",
	"emptykey2.yaml":    cm + "metadata: {name: k}\ndata:\n  '': a\n",
	"implicitnull.yaml": cm + "metadata: {name: k}\ndata:\n  ? \n  : a\n",
	"complexkey.yaml":   cm + "metadata: {name: k}\ndata:\n  ? [a, b]\n  : c\n",
	"mapkey.yaml":       cm + "metadata: {name: k}\ndata:\n  ? {a: b}\n  : c\n",
	"binarykey.yaml":    cm + "metadata: {name: k}\ndata: {!!binary aGk=: a, !!binary //4=: b}\n",
	"strkeys.yaml":      cm + "metadata: {name: k}\ndata: {!!str 1: a, !!str true: b, \"\\x41\": c, \"\\u00e9\": d, \"\\U0001F600\": e, \"\\t\": f, \"a\\nb\": g}\n",
	"intkey.yaml":       cm + "metadata: {name: k}\ndata: {!!int '7': a, !!float 1: b}\n",
	// Tags.
	"tags.yaml": cm + "metadata: {name: tags}\ndata: {a: !!binary aGVsbG8=, b: !!binary /w==, c: !!str 123, d: !!int 0x10, e: !!float 1, f: !!float '2.5', g: !!bool yes, " +
		"h: !!null '', i: !custom x, j: !custom {k: v}, k: !custom [1], l: !<tag:yaml.org,2002:str> 5, m: !!str, n: !!map {a: 1}, o: !!seq [1], " +
		"p: !!set {a, b}, q: !!omap [a: 1, b: 2], r: !!pairs [a: 1, a: 2], s: !local 0x10, t: !!binary \"aGVs\\nbG8=\"}\n",
	"tagstrnum.yaml":    cm + "metadata: {name: t}\ndata: {a: !!str 1.5e3}\n",
	"tagbinbad.yaml":    cm + "metadata: {name: t}\ndata: {a: !!binary a}\n",
	"tagintbad.yaml":    cm + "metadata: {name: t}\ndata: {a: !!int 1.5}\n",
	"tagfloatinf.yaml":  cm + "metadata: {name: t}\ndata: {a: !!float 1e400}\n",
	"tagmapstr.yaml":    cm + "metadata: {name: t}\ndata: !!str {a: 1}\n",
	"tagdoc.yaml":       "!!map\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\n",
	"tagdoccustom.yaml": "--- !shape\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\n",
	"tagdirective.yaml": "%TAG ! tag:example.com,2000:\n---\napiVersion: v1\nkind: !foo ConfigMap\nmetadata: {name: t}\n",
	"yaml11.yaml":       "%YAML 1.1\n---\n" + cm + "metadata: {name: y}\n",
	"yaml12.yaml":       "%YAML 1.2\n---\n" + cm + "metadata: {name: y}\n",
	"yaml2.yaml":        "%YAML 2.0\n---\n" + cm + "metadata: {name: y}\n",
	// Anchors, aliases and merge keys.
	"anchordoc.yaml": "&doc\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
	"anchorkinds.yaml": "apiVersion: &v v1\nkind: &k ConfigMap\nmetadata: &m {name: a, labels: &l {app: a}}\ndata: {v: *v, k: *k, l: *l}\n---\n" +
		"apiVersion: *v\nkind: ConfigMap\nmetadata: {name: b}\n",
	"mergetop.yaml":      "base: &base {apiVersion: v1, kind: ConfigMap}\n<<: *base\nmetadata: {name: m}\n",
	"mergemeta.yaml":     cm + "x-labels: &l {app: a, tier: b}\nmetadata:\n  name: m\n  labels:\n    <<: *l\n    extra: c\n",
	"mergelist.yaml":     cm + "a: &a {x: 1}\nb: &b {y: 2}\nmetadata: {name: m}\ndata:\n  <<: [*a, *b]\n  z: 3\n",
	"mergeinline.yaml":   cm + "metadata: {name: m}\ndata:\n  <<: {x: 1, y: 2}\n  z: 3\n",
	"mergeoverride.yaml": cm + "metadata: {name: m}\na: &a {x: 1}\ndata:\n  <<: *a\n  x: 2\n",
	"mergeafter.yaml":    cm + "metadata: {name: m}\na: &a {x: 1}\ndata:\n  x: 2\n  <<: *a\n",
	"mergelistover.yaml": cm + "metadata: {name: m}\na: &a {x: 1}\nb: &b {x: 2}\ndata:\n  <<: [*a, *b]\n",
	"mergescalar.yaml":   cm + "metadata: {name: m}\ndata:\n  <<: 5\n",
	"mergequoted.yaml":   cm + "metadata: {name: m}\ndata:\n  '<<': 5\n",
	"mergetag.yaml":      cm + "metadata: {name: m}\ndata:\n  !!merge <<: {x: 1}\n",
	"mergenull.yaml":     cm + "metadata: {name: m}\ndata:\n  <<: ~\n",
	"mergeempty.yaml":    cm + "metadata: {name: m}\ndata:\n  <<: {}\n",
	// A key merged and set: valid YAML, kept as yaml.v2 keeps it (by the
	// keys' order); a key written twice beside a merge is refused.
	"mergeannot.yaml":      cm + "metadata:\n  name: m\n  labels: &c {tier: old, team: a}\n  annotations: {<<: *c, tier: new}\n",
	"mergeannotafter.yaml": cm + "metadata:\n  name: m\n  labels: &c {tier: old, team: a}\n  annotations: {tier: new, <<: *c}\n",
	"mergelistannot.yaml":  cm + "data: &b {x: '3', v: '2'}\nmetadata:\n  name: m\n  labels: &a {x: '1'}\n  annotations:\n    <<: [*a, *b]\n    z: '4'\n",
	"mergeofmerge.yaml":    cm + "metadata:\n  name: m\n  labels: &a {x: '1'}\n  annotations: &b {<<: *a, x: '3'}\ndata: {<<: *b, x: '5'}\n",
	"mergetwice.yaml":      cm + "metadata:\n  name: m\n  labels: &l {a: b}\n  annotations:\n    <<: *l\n    k: '1'\n    k: '2'\n---\n" + cm + "metadata: {name: fine}\n",
	"aliasundefined.yaml":  cm + "metadata: {name: m}\ndata: *nope\n",
	"aliasself.yaml":       cm + "metadata: {name: m}\ndata: &a [*a]\n",
	"aliaskey.yaml":        cm + "metadata: {name: m}\nk: &k key\ndata: {*k : v}\n",
	"aliasacross.yaml":     cm + "metadata: {name: &n a}\n---\n" + cm + "metadata: {name: *n}\n",
	"aliasnull.yaml":       cm + "metadata: {name: m}\nn: &n ~\ndata: *n\n",
	"aliasitems.yaml":      "apiVersion: v1\nkind: List\nx: &i [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]\nitems: *i\n",
	// Scalars over lines.
	"blocks.yaml":     cm + "metadata: {name: bl}\ndata:\n  a: |\n    one\n    two\n  b: >\n    folded\n    text\n\n    para\n  c: |-\n    strip\n\n  d: |+\n    keep\n\n  e: |2\n      indented\n  f: >-\n\n    leading\n  g: plain\n    continued\n    lines\n  h: \"double\n    quoted\"\n  i: 'single\n\n    quoted'\n  j: |\n    # not a comment\n    --- not a separator\n",
	"blockempty.yaml": cm + "metadata: {name: bl}\ndata:\n  a: |\n  b: >\n  c: |-\n",
	"escapes.yaml": cm + "metadata: {name: e}\ndata: {a: \"\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\\"\\/\\\\\\N\\_\\L\\P\", b: \"\\x7f\\u0080\\U0010FFFF\", c: \"\\u2028\\u2029\", " +
		"d: \"<>&\", e: \"\\uFEFF\", f: \"\\uFFFD\", g: \"\\u0000\"}\n",
	"escapesurrogate.yaml": cm + "metadata: {name: e}\ndata: {a: \"\\uD83D\\uDE00\"}\n",
	// Metadata.
	"metanulls.yaml":      cm + "metadata: {name: a, labels: null, annotations: ~, finalizers: ~, generation: ~, uid: ~, selfLink: ~, generateName: ~, resourceVersion: ~}\n",
	"metanullelems.yaml":  cm + "metadata: {name: a, finalizers: [a, ~], labels: {a: ~}, annotations: {b: ~}}\n",
	"metaemptymaps.yaml":  cm + "metadata: {name: a, labels: {}, annotations: {}, finalizers: []}\n",
	"metaname.yaml":       cm + "metadata: {name: 123}\n",
	"metanamequoted.yaml": cm + "metadata: {name: '123', namespace: '0x10'}\n",
	"metanamebool.yaml":   cm + "metadata: {name: yes}\n",
	"metanamefloat.yaml":  cm + "metadata: {name: 1.0}\n",
	"metanamebinary.yaml": cm + "metadata: {name: !!binary YQ==, namespace: !!binary //4=}\n",
	"metanamemap.yaml":    cm + "metadata: {name: {a: b}}\n",
	"metagenerate.yaml":   cm + "metadata: {generateName: gen-}\n",
	"metalist.yaml":       cm + "metadata: [a]\n",
	"metastring.yaml":     cm + "metadata: x\n",
	"metaempty.yaml":      cm + "metadata: {}\n",
	"metaempty2.yaml":     cm + "metadata:\n",
	"metaint64.yaml":      cm + "metadata: {name: a, generation: 9223372036854775807, deletionGracePeriodSeconds: -9223372036854775808}\n",
	"metaintover.yaml":    cm + "metadata: {name: a, generation: 9223372036854775808}\n",
	"metaintfloat.yaml":   cm + "metadata: {name: a, generation: 1e18, deletionGracePeriodSeconds: 1e19}\n",
	"metaintstr.yaml":     cm + "metadata: {name: a, generation: '1'}\n",
	"metaintbool.yaml":    cm + "metadata: {name: a, generation: true}\n",
	"metaintoctal.yaml":   cm + "metadata: {name: a, generation: 0o17, deletionGracePeriodSeconds: 0x10}\n",
	"metatimes.yaml":      cm + "metadata: {name: a, creationTimestamp: 2001-12-14T21:59:43Z, deletionTimestamp: '2001-12-14T21:59:43.10-05:00'}\n",
	"metatimebad.yaml":    cm + "metadata: {name: a, creationTimestamp: 2001-12-14 21:59:43.10 -5}\n",
	"metatimeint.yaml":    cm + "metadata: {name: a, creationTimestamp: 5}\n",
	"metaowner.yaml":      cm + "metadata: {name: a, ownerReferences: [{apiVersion: v1, kind: A, name: o, uid: u, controller: yes, blockOwnerDeletion: off}, ~]}\n",
	"metaownerbad.yaml":   cm + "metadata: {name: a, ownerReferences: [{uid: 5}]}\n",
	"metaownermap.yaml":   cm + "metadata: {name: a, ownerReferences: {a: b}}\n",
	"metamanaged.yaml": cm + "metadata: {name: a, managedFields: [{manager: m, operation: Apply, apiVersion: v1, time: 2001-12-14T21:59:43Z, fieldsType: FieldsV1, " +
		"fieldsV1: 5, subresource: s}, {fieldsV1: [1, .5]}, {fieldsV1: ~}, {fieldsV1: 99999999999999999999}]}\n",
	"metamanagedbad.yaml":  cm + "metadata: {name: a, managedFields: [{manager: 5}]}\n",
	"metacase.yaml":        cm + "metadata: {Name: 5, NAME: x, name: a, Labels: 5, Namespace: [1], nameSpace: {}, clusterName: 5, initializers: x}\n",
	"metatopcase.yaml":     "apiVersion: v1\nkind: ConfigMap\nMetadata: 5\nKind: 5\nApiVersion: 5\nAPIVersion: 5\nmetadata: {name: a}\n",
	"metalabelsnum.yaml":   cm + "metadata: {name: a, labels: {1: a, true: b, 1.5: c}}\n",
	"metalabelsbin.yaml":   cm + "metadata: {name: a, annotations: {a: !!binary //79}}\n",
	"metafinalbad.yaml":    cm + "metadata: {name: a, finalizers: [1]}\n",
	"metafinalmap.yaml":    cm + "metadata: {name: a, finalizers: {a: b}}\n",
	"metalabelsstr.yaml":   cm + "metadata: {name: a, labels: x}\n",
	"apiversionmap.yaml":   "apiVersion: {a: 1}\nkind: ConfigMap\nmetadata: {name: a}\n",
	"kindlist.yaml":        "apiVersion: v1\nkind: [ConfigMap]\nmetadata: {name: a}\n",
	"kindnull.yaml":        "apiVersion: v1\nkind: ~\nmetadata: {name: a}\n",
	"kindempty.yaml":       "apiVersion: v1\nkind: ''\nmetadata: {name: a}\n",
	"apiversionbad.yaml":   "apiVersion: a/b/c\nkind: ConfigMap\nmetadata: {name: a}\n",
	"apiversionslash.yaml": "apiVersion: /v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: /\nkind: ConfigMap\nmetadata: {name: c}\n",
	"apiversionnull.yaml":  "apiVersion: ~\nkind: ConfigMap\nmetadata: {name: a}\n",
	"apiversionint.yaml":   "apiVersion: 1\nkind: ConfigMap\nmetadata: {name: a}\n",
	"apiversionempty.yaml": "apiVersion: ''\nkind: ConfigMap\nmetadata: {name: a}\n",
	// Namespaces.
	"namespaces.yaml": cm + "metadata: {name: a, namespace: ''}\n---\n" + cm + "metadata: {name: b, namespace: ~}\n---\n" + cm + "metadata: {name: c, namespace: ns}\n---\n" +
		cm + "metadata: {name: d, namespace: default}\n---\n" + cm + "metadata: {name: e, namespace: ' '}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns, namespace: x}\n",
	// Lists.
	"lists.yaml": "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: '9', namespace: lns, labels: {app: a}}\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {app: b}}}\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: '', resourceVersion: '3'}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: x, labels: {app: a}}}\n",
	"listkinds.yaml":    "apiVersion: apps/v1\nkind: DeploymentList\nitems:\n- metadata: {name: a}\n- {kind: '', apiVersion: '', metadata: {name: b}}\n- {kind: 5, metadata: {name: c}}\n- ~\n- {}\n",
	"listkindonly.yaml": "apiVersion: v1\nkind: List\nitems:\n- {kind: ConfigMap, apiVersion: '', metadata: {name: a}}\n",
	"listlist.yaml":     "kind: ListList\napiVersion: v1\nitems:\n- {metadata: {name: a}}\n",
	"listkindList.yaml": "kind: List\napiVersion: v1\nitems:\n- {metadata: {name: a}}\n",
	"listnokind.yaml":   "apiVersion: v1\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
	"listmetabad.yaml":  "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: 5}\nitems: []\n",
	"listitemmetabad.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: 5, namespace: [x], labels: 5}}\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: [x]}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, resourceVersion: 7}}\n",
	"listitemsmap.yaml":      "apiVersion: v1\nkind: List\nitems: {a: b}\n",
	"listitemsstr.yaml":      "apiVersion: v1\nkind: List\nitems: ''\n",
	"listitemsnested.yaml":   "apiVersion: v1\nkind: List\nitems:\n- [a]\n",
	"listitemsnull.yaml":     "apiVersion: v1\nkind: List\nitems: [~, ~]\n",
	"listitemsnull2.yaml":    "apiVersion: v1\nkind: ConfigMapList\nitems: [~, ~]\n",
	"listitemslist.yaml":     "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMapList, items: ~}\n- {apiVersion: v1, kind: ConfigMapList, items: []}\n",
	"listitemslistnull.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMapList, items: ~, metadata: {name: x}}\n",
	"listrv.yaml":            "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: ''}\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: '3'}}\n",
	"listnotlist.yaml":       cm + "metadata: {name: a}\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}]\n",
	"listsecret.yaml":        "apiVersion: v1\nkind: SecretList\nitems:\n- {metadata: {name: a}, data: {k: dg==}}\n- {apiVersion: v1, metadata: {name: b}}\n",
	"listapps.yaml":          "apiVersion: apps/v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {kind: Deployment, metadata: {name: b}}\n",
	"listempty.yaml":         "apiVersion: v1\nkind: List\nitems:\n",
	"listdeep.yaml":          "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    items: x\n",
	// Documents, separators, ends.
	"onlycomments.yaml":   "# a\n# b\n",
	"onlyseparators.yaml": "---\n---\n---\n",
	"docend.yaml":         cm + "metadata: {name: a}\n...\n" + cm + "metadata: {name: b}\n",
	"docendsep.yaml":      cm + "metadata: {name: a}\n...\n---\n" + cm + "metadata: {name: b}\n...\n",
	"docendonly.yaml":     "...\n",
	"docendfirst.yaml":    "...\n" + cm + "metadata: {name: a}\n",
	"sepcomment.yaml":     "--- # c\n" + cm + "metadata: {name: a}\n---    # d\n" + cm + "metadata: {name: b}\n",
	"septab.yaml":         "---\t\n" + cm + "metadata: {name: a}\n---\t# c\n" + cm + "metadata: {name: b}\n",
	"sepspace.yaml":       "--- \n" + cm + "metadata: {name: a}\n",
	"sepblock.yaml":       "--- |\n  text\n",
	"sepvalue.yaml":       "--- {a: 1}\n",
	"sepindented.yaml":    cm + "metadata: {name: a}\ndata:\n  k: |\n    x\n ---\n",
	"sepinscalar.yaml":    cm + "metadata: {name: a}\ndata:\n  k: \"a\n---\nb\"\n",
	"sepfour.yaml":        cm + "metadata: {name: a}\n----\n",
	"sepnonl.yaml":        cm + "metadata: {name: a}\n---",
	"sepcrlf.yaml":        "---\r\n" + cm + "metadata: {name: a}\r\n---\r\n" + cm + "metadata: {name: b}\r\n",
	"sepnull.yaml":        "--- ~\n",
	"sepcommentonly.yaml": "---#c\n" + cm + "metadata: {name: a}\n",
	"nulldocs.yaml":       "~\n---\nnull\n---\nNULL\n---\n!!null\n---\n''\n",
	"emptystrdoc.yaml":    "''\n",
	"scalardoc.yaml":      "5\n",
	"seqdoc.yaml":         "- " + strings.ReplaceAll(cm, "\n", "\n  ") + "metadata: {name: a}\n",
	"emptyfile.yaml":      "",
	"spaces.yaml":         "   \n\n\t\n  ",
	"newlines.yaml":       "\n\n\n",
	"tabsonly.yaml":       "\t\t\n",
	// Line ends and encodings.
	"crlf.yaml":        strings.ReplaceAll(cm+"metadata:\n  name: a\ndata:\n  k: |\n    x\n    y\n  j: \"a\n    b\"\n", "\n", "\r\n"),
	"cr.yaml":          strings.ReplaceAll(cm+"metadata:\n  name: a\ndata:\n  k: v\n---\n"+cm+"metadata:\n  name: b\n", "\n", "\r"),
	"mixed.yaml":       cm + "metadata:\r\n  name: a\ndata:\r  k: v\n",
	"nel.yaml":         cm + "metadata: {name: a}\ndata: {k: \"a\u0085b\", l: a\u2028b}\n",
	"nelbreak.yaml":    cm + "metadata: {name: a}\u2028data: {k: v}\n",
	"bommid.yaml":      cm + "metadata: {name: a}\n---\n\ufeff" + cm + "metadata: {name: b}\n",
	"bomvalue.yaml":    cm + "metadata: {name: \"\ufeffa\"}\n",
	"nul.yaml":         cm + "metadata: {name: a}\ndata: {k: \"\x00\"}\n",
	"ctrl.yaml":        cm + "metadata: {name: a}\ndata: {k: \"\x01\x7f\"}\n",
	"ctrlplain.yaml":   cm + "metadata: {name: a}\ndata: {k: a\x01b}\n",
	"noeol.yaml":       cm + "metadata: {name: a}",
	"trailingsp.yaml":  cm + "metadata: {name: a}   \n   \n",
	"nbsp.yaml":        "\u00a0" + cm + "metadata: {name: a}\n",
	"tabvalue.yaml":    cm + "metadata: {name: a}\ndata:\n  k:\tv\n  l: a\tb\n",
	"tabafterkey.yaml": cm + "metadata:\t{name: a}\n",
	// JSON.
	"stream.json":            `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
	"streamnl.json":          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}\n",
	"streamnull.json":        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} null null {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
	"streamnum.json":         `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} 5 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
	"streamarr.json":         `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} [] {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
	"streamstr.json":         `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} "x"`,
	"streamsep.json":         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n---\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}\n",
	"streamempty.json":       `{}`,
	"json.yaml":              `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"n":1.0,"m":-0,"e":1e3,"b":18446744073709551616,"u":"\ud800","s":"\u00e9"}}`,
	"jsondup.json":           `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},"kind":"Secret"}`,
	"jsondupitems.json":      `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}],"items":null}`,
	"jsoncase.json":          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","Name":"b"},"Items":[],"ITEMS":5,"Kind":"Secret"}`,
	"jsonnoext":              `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"noext"}}`,
	"jsonarray.json":         `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]`,
	"jsonarrayws.json":       "  \n[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}]",
	"jsoncomment.json":       "// c\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}",
	"jsoncommentafter.json":  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}} # c\n",
	"jsontrailingcomma.json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",}}`,
	"jsonsingle.json":        `{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a'}}`,
	"jsonunquoted.json":      `{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}`,
	"jsonnum.json":           `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","generation":1.0}}`,
	"jsonnum2.json":          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","generation":1e2}}`,
	"jsonbig.json":           `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":1e400}}`,
	"jsondeep.json":          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}`,
	"jsonnul.json":           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\x00",
	"jsonws.json":            "\u00a0{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}",
	"jsonwsline.json":        "\u2028{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}",
	"jsonvt.json":            "\v{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}",
	"jsoncrlf.json":          "{\r\n\"apiVersion\":\"v1\",\r\n\"kind\":\"ConfigMap\",\r\n\"metadata\":{\"name\":\"a\"}}\r\n",
	"jsontwothenbad.json":    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}} {`,
	"jsononethenyaml.json":   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	"jsonmeta.json":          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":5}}`,
	"jsonlistnull.json":      `{"apiVersion":"v1","kind":"ConfigMapList","items":[null,{"metadata":{"name":"a"}}]}`,
	"jsonescape.json":        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"\u0061":"x","a\/b":"\ud83d\ude00","c":"\ud800\udc00x\udfff"}}`,
	"jsonlate.json":          strings.Repeat(" ", 4095) + `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}`,
	"jsonlate2.json":         strings.Repeat(" ", 4096) + `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}`,
	"jsonlateyaml.yaml":      strings.Repeat("\n", 4096) + "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"late\"}}\n",
}

// TestReadLocalHostile: each hostile file alone, then all of them in one
// directory (by name and with -R), with and without selectors.
func TestReadLocalHostile(t *testing.T) {
	files := map[string][]byte{}
	for name, doc := range hostileDocuments {
		files[name] = []byte(doc)
	}
	dir := t.TempDir()
	paths := writeFiles(t, dir, files)
	for _, path := range paths {
		for _, selector := range []string{"", " ", "app", "!app", "app in (a)", "app notin (a)", "app=", "app!=a,tier"} {
			if d := diffWithBuilder(Files{Filenames: []string{path}}, selector); d != "" {
				t.Errorf("%s -l %q: %s\n--- %s", filepath.Base(path), selector, d, fileHead(path))
			}
		}
	}
	t.Logf("by name: %v", compareWithBuilder(t, Files{Filenames: paths}, ""))
	t.Logf("-R: %v", compareWithBuilder(t, Files{Filenames: []string{dir}, Recursive: true}, "app"))
}

// hostileTokens are spliced into the hostile documents by the mutations.
var hostileTokens = []string{
	"\n", "\r\n", "\r", "\t", " ", "  ", "\u2028", "\u0085", "\ufeff", "\u00a0", "---\n", "\n---\n", "\n--- # c\n", "\n...\n", "#", " # c",
	"&a ", "*a", "&b ", "*b", "<<: *a\n", "<<: ", "!!binary ", "!!str ", "!!int ", "!!float ", "!!null ", "!!map ", "!!seq ", "!x ", "!!timestamp ",
	"? ", ": ", "- ", "{", "}", "[", "]", ",", "'", "\"", "|", ">", "|-", ">+", "%", "@", "`",
	"~", "null", "yes", "no", "on", "off", "y", "n", "0o17", "017", "0x1F", "1_000", "1:20", ".inf", ".nan", "-0", "1e3", "1.0", "1e21",
	"18446744073709551616", "9223372036854775808", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "aGk=", "//4=",
	"items", "items: ", "items:\n- ", "kind: List\n", "kind: ", "apiVersion: ", "metadata: ", "name: ", "namespace: ", "labels: ", "app: a",
	"resourceVersion: ", "generation: ", "creationTimestamp: ", "finalizers: ", "List", "v1", "ConfigMap", "''", "\"\"",
	"{\"a\": 1}", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"j\"}}", "\\u00e9", "\\x41", "\\ud800",
}

// mutate changes doc at random: a token spliced in, bytes cut, a line
// repeated, moved or indented anew, a word replaced.
func mutate(r *rand.Rand, doc string) string {
	for range 1 + r.IntN(3) {
		lines := strings.SplitAfter(doc, "\n")
		switch k := r.IntN(8); {
		case k < 3 || len(doc) == 0:
			i := 0
			if len(doc) > 0 {
				i = r.IntN(len(doc) + 1)
			}
			doc = doc[:i] + hostileTokens[r.IntN(len(hostileTokens))] + doc[i:]
		case k == 3:
			i := r.IntN(len(doc))
			j := min(len(doc), i+1+r.IntN(4))
			doc = doc[:i] + doc[j:]
		case k == 4:
			i := r.IntN(len(lines))
			lines = slices.Insert(lines, r.IntN(len(lines)+1), lines[i])
			doc = strings.Join(lines, "")
		case k == 5:
			i, j := r.IntN(len(lines)), r.IntN(len(lines))
			lines[i], lines[j] = lines[j], lines[i]
			doc = strings.Join(lines, "")
		case k == 6:
			i := r.IntN(len(lines))
			lines[i] = strings.Repeat(" ", r.IntN(5)) + strings.TrimLeft(lines[i], " ")
			doc = strings.Join(lines, "")
		default:
			words := strings.FieldsFunc(doc, func(c rune) bool { return strings.ContainsRune(" \n{}[],:", c) })
			if len(words) > 0 {
				w := words[r.IntN(len(words))]
				doc = strings.Replace(doc, w, hostileTokens[r.IntN(len(hostileTokens))], 1+r.IntN(2))
			}
		}
	}
	return doc
}

// TestReadLocalHostileMutations: the hostile documents, the edge cases
// and generated documents, mutated (HOSTILE_MUTATIONS of them; 3000 by
// default, 600 with -short or the race detector), compared with the
// builder in batches and, when a batch differs, file by file.
func TestReadLocalHostileMutations(t *testing.T) {
	n := 3000
	if !thorough() {
		n = 600
	}
	if s := os.Getenv("HOSTILE_MUTATIONS"); s != "" {
		fmt.Sscan(s, &n)
	}
	seed := uint64(7)
	if s := os.Getenv("HOSTILE_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	var seeds []string
	for _, name := range slices.Sorted(maps.Keys(hostileDocuments)) {
		seeds = append(seeds, hostileDocuments[name])
	}
	g := &yamlGen{r: rand.New(rand.NewPCG(seed, 99))}
	for range 200 {
		seeds = append(seeds, string(g.file()))
	}
	r := rand.New(rand.NewPCG(seed, 3))
	exts := []string{".yaml", ".yml", ".json", ""}
	const batch = 200
	failures := 0
	for start := 0; start < n && failures < 10; start += batch {
		dir := t.TempDir()
		files := map[string][]byte{}
		for i := start; i < min(n, start+batch); i++ {
			content := seeds[r.IntN(len(seeds))]
			switch k := r.IntN(4); {
			case k == 0:
				content = string(g.file()) // as generated, without the seeds' reuse
			case k == 1:
				content = mutate(r, string(g.file()))
			default:
				content = mutate(r, content)
			}
			files[fmt.Sprintf("m-%06d%s", i, exts[r.IntN(len(exts))])] = []byte(content)
		}
		paths := writeFiles(t, dir, files)
		selector := []string{"", "app", "!app"}[r.IntN(3)]
		if diffWithBuilder(Files{Filenames: paths}, selector) == "" {
			continue
		}
		for _, path := range paths {
			one := Files{Filenames: []string{path}}
			if d := diffWithBuilder(one, selector); d != "" && !colliding(path) && builderStable(one, selector) {
				failures++
				t.Errorf("%s -l %q: %s\n%q", path, selector, d, files[filepath.Base(path)])
			}
		}
	}
}

// TestReadLocalHostileTrees: directories walked with -R and without, named
// in every way — hidden files and directories, extensions in other cases,
// symlinks to files, to directories (named as manifests or not) and
// dangling, empty and blank files, a path named twice or inside another.
func TestReadLocalHostileTrees(t *testing.T) {
	dir := t.TempDir()
	doc := func(name string) []byte {
		return []byte(cm + "metadata: {name: " + name + ", labels: {app: a}}\n")
	}
	writeFiles(t, dir, map[string][]byte{
		"a.yaml": doc("a"), "b.yml": doc("b"), "c.json": []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`),
		".hidden.yaml": doc("hidden"), ".yaml": doc("dotyaml"), "upper.YAML": doc("upper"), "x.yaml.bak": doc("bak"), "noext": doc("noext"),
		"dot.": doc("dot"), "empty.yaml": nil, "blank.yaml": []byte(" \n\n  \n"), "comment.yml": []byte("# c\n"),
		".git/config.yaml": doc("git"), "sub/d.yaml": doc("d"), "sub/deeper/e.yaml": doc("e"), "sub/.hidden/f.yaml": doc("f"),
		"sub.yaml/g.yaml": doc("g"), "only-other/notes.txt": []byte("text"), "mixed/h.yaml": doc("h"), "mixed/bad.yaml": []byte("a: [\n"),
		"mixed/i.json": []byte("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"i\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"i2\"}}"),
	})
	for _, link := range [][2]string{
		{"a.yaml", "link-to-file.yaml"}, {"a.yaml", "link-to-file-noext"}, {"sub", "link-to-dir.yaml"}, {"sub", "link-to-dir"},
		{"nowhere.yaml", "dangling.yaml"}, {"../a.yaml", "sub/up.yaml"}, {"..", "sub/deeper/loop"}, {"/dev/null", "devnull.yaml"},
	} {
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	cases := [][]string{
		{dir}, {dir + "/"}, {dir + "/."}, {p("sub"), dir}, {dir, dir}, {dir, p("a.yaml")}, {p("a.yaml"), p("a.yaml")},
		{p("link-to-file.yaml")}, {p("link-to-file-noext")}, {p("link-to-dir.yaml")}, {p("link-to-dir")}, {p("noext"), p("upper.YAML")},
		{p("sub.yaml")}, {p("empty.yaml")}, {p("blank.yaml")}, {p("mixed")}, {p("mixed"), p("only-other")}, {p("only-other"), p("mixed")},
		{p("devnull.yaml")}, {"/dev/null"}, {p("sub/deeper/loop")}, {p(".git")}, {p("sub/../a.yaml")}, {p("./sub//d.yaml")},
	}
	for _, names := range cases {
		for _, recursive := range []bool{false, true} {
			for _, selector := range []string{"", "app=a", "!app"} {
				files := Files{Filenames: names, Recursive: recursive}
				if d := diffWithBuilder(files, selector); d != "" {
					t.Errorf("%v -R=%v -l %q: %s", names, recursive, selector, d)
				}
			}
		}
	}
}

// builderDocument is what the builder makes of one YAML document: the
// object, nil for a document it skips, or its error.
func builderDocument(doc []byte) (obj any, err error) {
	var ext runtimeobj.RawExtension
	if err := sigsyaml.Unmarshal(doc, &ext); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(ext.Raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	o, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := utiljson.Unmarshal(raw, &metadataOnlyObject{}); err != nil {
		return nil, err
	}
	return o, nil
}

// TestYAMLObjectHostile: yamlObject against the builder's decoders, one
// document at a time (no files: many more documents), on the generated
// documents and their mutations: where yamlObject answers, the builder
// gives the same object; where the builder fails, yamlObject falls back.
func TestYAMLObjectHostile(t *testing.T) {
	n := 20000
	if !thorough() {
		n = 4000
	}
	if s := os.Getenv("HOSTILE_DOCUMENTS"); s != "" {
		fmt.Sscan(s, &n)
	}
	seed := uint64(11)
	if s := os.Getenv("HOSTILE_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	g := &yamlGen{r: rand.New(rand.NewPCG(seed, 5))}
	r := rand.New(rand.NewPCG(seed, 6))
	var seeds []string
	for _, name := range slices.Sorted(maps.Keys(hostileDocuments)) {
		seeds = append(seeds, hostileDocuments[name])
	}
	fast, left, failures := 0, 0, 0
	for i := 0; i < n && failures < 10; i++ {
		var doc string
		switch i % 3 {
		case 0:
			doc = g.document()
		case 1:
			doc = mutate(r, g.document())
		default:
			doc = mutate(r, seeds[r.IntN(len(seeds))])
		}
		// One document, as the splitter gives it.
		docs, _ := splitDocuments([]byte(doc))
		for _, d := range docs {
			got, why := yamlObject(d)
			want, err := builderDocument(d)
			switch {
			case why != "" && err == nil && want != nil && !builderDocumentStable(d, want):
				// colliding keys: the builder has no one answer
			case why != "":
				if err == nil {
					left++ // a key set twice, nesting past maxDepth: the builder's
				}
			case err != nil:
				failures++
				t.Errorf("readLocal reads %q, the builder fails: %v", d, err)
			case !reflect.DeepEqual(any(got), want) && !(got == nil && want == nil):
				failures++
				t.Errorf("%q:\nreadLocal %#v\nbuilder   %#v", d, got, want)
			default:
				fast++
			}
		}
	}
	t.Logf("%d documents read alike, %d the builder reads left to it", fast, left)
}

func builderDocumentStable(doc []byte, first any) bool {
	for range 8 {
		if again, _ := builderDocument(doc); !reflect.DeepEqual(again, first) {
			return false
		}
	}
	return true
}

// splitDocuments splits data as splitInput does.
func splitDocuments(data []byte) ([][]byte, error) {
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		docs = append(docs, doc)
	}
}

// hostileValues are values of every shape, for the fields whose type the
// builder checks.
var hostileValues = []string{
	"a", "'a'", "''", "~", "null", "5", "-5", "'5'", "0", "-0", "1.0", "1.5", "1e3", "1e19", "1e300", "9223372036854775807",
	"9223372036854775808", "-9223372036854775809", "18446744073709551616", "0x10", "0o17", "yes", "no", "true", "'true'",
	"2001-12-14", "2001-12-14T21:59:43Z", "'2001-12-14T21:59:43Z'", "2001-12-14t21:59:43.10-05:00", "'2001-12-14 21:59:43.10 -5'",
	"!!binary YQ==", "!!binary //4=", "!!str 5", "!!float 5", "!x y", "[]", "[a]", "[a, ~]", "[5]", "[[a]]", "[{a: b}]", "[~]",
	"{}", "{a: b}", "{a: 5}", "{a: ~}", "{a: [b]}", "{5: a}", "{true: a}", "{a: {b: c}}", "\"\\u00e9\"", "\"\\t\"", "|\n  x\n",
	"[{apiVersion: v1, kind: A, name: o, uid: u}]", "[{controller: yes}]", "[{controller: 1}]", "[{uid: 5}]", "[{name: ~}]",
	"[{manager: m, time: '2001-12-14T21:59:43Z'}]", "[{time: 2001-12-14}]", "[{fieldsV1: 5}]", "[{fieldsV1: {f:a: {}}}]", "[{fieldsType: 5}]",
	"[{operation: ~}]", "[{subresource: [x]}]", "[{blockOwnerDeletion: off, controller: on}]",
}

// TestMetadataHostile: each field of ObjectMeta (and keys it does not
// have, in other cases) and of TypeMeta, set to each hostile value, read by
// yamlObject and by the builder's decoders, at the top and as a List's
// item.
func TestMetadataHostile(t *testing.T) {
	fields := slices.Sorted(maps.Keys(objectMetaKeys))
	fields = append(fields, "Name", "NAMESPACE", "labelS", "other", "clusterName", "initializers", "")
	check := func(doc string) {
		t.Helper()
		got, why := yamlObject([]byte(doc))
		want, err := builderDocument([]byte(doc))
		switch {
		case why != "":
			if err == nil && why != fallbackCollide && why != fallbackKey {
				t.Logf("fallback %q where the builder reads:\n%s", why, doc)
			}
		case err != nil:
			t.Errorf("readLocal reads, the builder fails (%v):\n%s", err, doc)
		case !reflect.DeepEqual(any(got), want) && !(got == nil && want == nil):
			t.Errorf("readLocal %#v\nbuilder %#v\n%s", got, want, doc)
		}
	}
	n := 0
	for _, field := range fields {
		for _, v := range hostileValues {
			value := strings.ReplaceAll(v, "\n", "\n    ")
			check(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  %q: %s\n", field, value))
			check(fmt.Sprintf("apiVersion: v1\nkind: List\nmetadata:\n  %q: %s\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    %q: %s\n", field, value, field, strings.ReplaceAll(value, "\n", "\n  ")))
			n += 2
		}
	}
	for _, field := range []string{"apiVersion", "kind", "metadata", "items", "Items", "APIVersion", "Kind", "Metadata"} {
		for _, v := range hostileValues {
			value := strings.ReplaceAll(v, "\n", "\n  ")
			for _, doc := range []string{
				fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\n%s: %s\n", field, value),
				fmt.Sprintf("apiVersion: v1\nkind: ConfigMapList\nitems:\n- %s: %s\n", field, strings.ReplaceAll(value, "\n", "\n  ")),
				fmt.Sprintf("%s: %s\n", field, value),
			} {
				if strings.Count(doc, field+":") == 1 || field == "items" {
					check(doc)
					n++
				}
			}
		}
	}
	t.Logf("%d documents", n)
}

// TestReadLocalHostileSizes: lines as long as the line reader's buffer and
// longer (a CR LF across its end), a value of a megabyte, ten thousand
// documents in one file, a List of ten thousand items, a document of
// deep nesting just under and over readLocal's bound.
func TestReadLocalHostileSizes(t *testing.T) {
	files := map[string][]byte{}
	for _, n := range []int{4000, 4050, 4080, 4090, 4094, 4095, 4096, 4097, 8191, 8192, 70000} {
		for _, end := range []string{"\n", "\r\n"} {
			key := "k: "
			line := key + strings.Repeat("x", max(0, n-len(key)-len(end))) + end
			doc := cm + "metadata: {name: long}\ndata:\n  " + line + "  j: " + strings.Repeat("y", n%97) + end
			files[fmt.Sprintf("long-%d-%d.yaml", n, len(end))] = []byte(strings.ReplaceAll(doc, "\n", end))
			// The line at the start of the file, and a separator across the buffer.
			files[fmt.Sprintf("first-%d-%d.yaml", n, len(end))] = []byte("# " + strings.Repeat("c", n) + end + "---" + end + strings.ReplaceAll(cm+"metadata: {name: first}\n", "\n", end))
		}
	}
	files["megabyte.yaml"] = []byte(cm + "metadata: {name: mb}\ndata: {k: " + strings.Repeat("z", 1<<20) + "}\n")
	var many strings.Builder
	var items strings.Builder
	count := 10000
	if !thorough() {
		count = 2000
	}
	for i := range count {
		fmt.Fprintf(&many, "---\n%smetadata: {name: m%d, labels: {app: a}}\n", cm, i)
		fmt.Fprintf(&items, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: i%d}}\n", i)
	}
	files["many.yaml"] = []byte(many.String())
	files["items.yaml"] = []byte("apiVersion: v1\nkind: List\nitems:\n" + items.String())
	for _, depth := range []int{998, 999, 1000, 1001, 1002} {
		files[fmt.Sprintf("deep-%d.yaml", depth)] = []byte(cm + "metadata: {name: deep}\ndata: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n")
		files[fmt.Sprintf("deepmap-%d.yaml", depth)] = []byte(cm + "metadata: {name: deep}\ndata: " + strings.Repeat("{a: ", depth) + "x" + strings.Repeat("}", depth) + "\n")
	}
	paths := writeFiles(t, t.TempDir(), files)
	for _, path := range paths {
		if d := diffWithBuilder(Files{Filenames: []string{path}}, ""); d != "" {
			t.Errorf("%s: %s", filepath.Base(path), d[:min(len(d), 2000)])
		}
	}
	t.Logf("%v", compareWithBuilder(t, Files{Filenames: paths}, "app"))
}
