package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	sigsyaml "sigs.k8s.io/yaml"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// DocumentsDeclaring reads the file source again and returns the places,
// from 1 and among its non-empty YAML documents, of those declaring o's
// kind and name (a List counts as one document). Only a regular file is
// read again: a FIFO would wait for ever for a second writer, and a file
// named STDIN is not what stdin held.
func DocumentsDeclaring(source string, o *Object) ([]int, error) {
	if info, err := os.Stat(source); err != nil || !info.Mode().IsRegular() || source == stdinSource {
		return nil, fmt.Errorf("%s: not a regular file, not read again", source)
	}
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
