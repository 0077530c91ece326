package apply

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// refuseDuplicates fails every ready object that another ready one
// declares again — same group, kind, namespace (as settled by prepare) and
// name, in any version — naming where each copy is (done records its
// event), and returns the others.
// kubectl applies both in turn and the last wins; kapply applies
// concurrently, so neither is applied.
func (r *runner) refuseDuplicates(objects []*Object, ready []int, done func(int, Event)) []int {
	byKey := map[objectKey][]int{}
	for _, i := range ready {
		key := keyOfObject(objects[i].Obj)
		byKey[key] = append(byKey[key], i)
	}
	var unique []int
	for _, i := range ready {
		o := objects[i]
		copies := byKey[keyOfObject(o.Obj)]
		if len(copies) == 1 {
			unique = append(unique, i)
			continue
		}
		done(i, Event{Object: o, Outcome: Failed, Err: objectError(o, duplicateError(objects, copies))})
	}
	return unique
}

func duplicateError(objects []*Object, copies []int) error {
	var where []string
	seen := map[string]bool{}
	for _, i := range copies {
		o := objects[i]
		if seen[o.Source] {
			continue
		}
		seen[o.Source] = true
		where = append(where, whereIn(o.Source, objects, copies))
	}
	return fmt.Errorf("declared %d times, in %s: none of them is applied", len(copies), strings.Join(where, " and "))
}

// whereIn names source and the places in it of the copies it holds: its
// documents when it is a file that can be read again, else the objects'
// places among those read from it.
func whereIn(source string, objects []*Object, copies []int) string {
	var first *Object
	var places []int
	for _, i := range copies {
		if objects[i].Source == source {
			first = objects[i]
			places = append(places, objects[i].Index)
		}
	}
	what := "object"
	if docs, err := documentsDeclaring(source, first); err == nil && len(docs) == len(places) {
		what, places = "document", docs
	}
	if len(places) > 1 {
		what += "s"
	}
	list := make([]string, len(places))
	for n, p := range places {
		list[n] = fmt.Sprint(p)
	}
	return fmt.Sprintf("%s (%s %s)", source, what, strings.Join(list, ", "))
}

// documentsDeclaring reads the file source again and returns the places,
// from 1 and among its non-empty YAML documents, of those declaring o's
// kind and name (a List counts as one document).
func documentsDeclaring(source string, o *Object) ([]int, error) {
	f, err := os.Open(source)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := yaml.NewYAMLReader(bufio.NewReader(f))
	var docs []int
	for n := 0; ; {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if isEmptyDocument(doc) {
			continue
		}
		n++
		if declares(doc, o) {
			docs = append(docs, n)
		}
	}
}

// isEmptyDocument reports a document with nothing but separators, comments
// and blanks, which the loader skips.
func isEmptyDocument(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return bytes.Equal(line, []byte("null"))
		}
	}
	return true
}

// declares reports whether the document is o, or a List holding it.
func declares(doc []byte, o *Object) bool {
	var u unstructured.Unstructured
	if err := sigsyaml.Unmarshal(doc, &u.Object); err != nil {
		return false
	}
	if u.IsList() {
		items, _, _ := unstructured.NestedSlice(u.Object, "items")
		for _, item := range items {
			if m, ok := item.(map[string]any); ok && same(&unstructured.Unstructured{Object: m}, o) {
				return true
			}
		}
		return false
	}
	return same(&u, o)
}

func same(u *unstructured.Unstructured, o *Object) bool {
	ns := u.GetNamespace()
	return u.GroupVersionKind().GroupKind() == o.Obj.GroupVersionKind().GroupKind() &&
		u.GetName() == o.Obj.GetName() && (ns == "" || ns == o.Obj.GetNamespace())
}
