// Package yamldoc finds objects among the YAML documents of a file: the
// loader (pkg/load) skips empty documents and refuses lossy ones with it,
// and apply names the documents of an object declared twice with it,
// without importing the loader (and the resource builder behind it).
package yamldoc

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

// Stdin is the resource builder's name for standard input, as a source.
const Stdin = "STDIN"

// Declaring reads the file source again and returns the places, from 1
// and among its non-empty YAML documents, of those declaring obj's kind
// and name (a List counts as one document). Only a regular file is read
// again: a FIFO would wait for ever for a second writer, and a file named
// STDIN is not what stdin held.
func Declaring(source string, obj *unstructured.Unstructured) ([]int, error) {
	if info, err := os.Stat(source); err != nil || !info.Mode().IsRegular() || source == Stdin {
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
		if IsEmpty(doc) {
			continue
		}
		n++
		if Declares(doc, obj) {
			docs = append(docs, n)
		}
	}
}

// IsEmpty reports a document with nothing but separators, comments and
// blanks, which the loader skips.
func IsEmpty(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return bytes.Equal(line, []byte("null"))
		}
	}
	return true
}

// Declares reports whether the document is obj, or a List holding it.
func Declares(doc []byte, obj *unstructured.Unstructured) bool {
	var u unstructured.Unstructured
	if err := sigsyaml.Unmarshal(doc, &u.Object); err != nil {
		return false
	}
	if u.IsList() {
		items, _, _ := unstructured.NestedSlice(u.Object, "items")
		for _, item := range items {
			if m, ok := item.(map[string]any); ok && same(&unstructured.Unstructured{Object: m}, obj) {
				return true
			}
		}
		return false
	}
	return same(&u, obj)
}

func same(u, obj *unstructured.Unstructured) bool {
	ns := u.GetNamespace()
	return u.GroupVersionKind().GroupKind() == obj.GroupVersionKind().GroupKind() &&
		u.GetName() == obj.GetName() && (ns == "" || ns == obj.GetNamespace())
}
