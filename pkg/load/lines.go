package load

import (
	"bytes"
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeobj "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// Lines of documents: an object read from a file knows the line its
// document starts on (Object.Line), so that CI can point at it (diff
// --github's ::error file=F,line=L). Only what readLocal reads itself has
// lines; what the resource builder reads (kustomize, inputs it falls back
// to) has none (0).

// docLines maps each object readLocal read to the line of its document.
type docLines map[runtimeobj.Object]int

// loadWithLines is LoadContext's read: the objects, their errors, and the
// line of each object's document.
func loadWithLines(ctx context.Context, getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*Object, []error) {
	objects, errs, _ := loadRead(ctx, getter, files, selector)
	return objects, errs
}

// loadRead is loadWithLines, and the inputs readLocal read (nil when
// the builder read them all): the differential tests compare the binary's
// own read with the builder's, input by input.
func loadRead(ctx context.Context, getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*Object, []error, []*localFile) {
	inputs, ok := listInputs(files)
	if !ok {
		infos, errs := buildWithin(ctx, getter, files, selector)
		objects, errs := objectsOfInfos(infos, errs, nil)
		return objects, errs, nil
	}
	read, ok := readLocal(ctx, getter, withRequestTimeout(getter, files), inputs, selector)
	if !ok {
		infos, errs := build(getter, files, selector) // the builder's error, once
		objects, errs := objectsOfInfos(infos, errs, nil)
		return objects, errs, nil
	}
	lines := docLines{}
	for _, f := range read {
		for i, info := range f.infos {
			if i < len(f.infoLines) {
				lines[info.Object] = f.infoLines[i]
			}
		}
	}
	objects, errs := objectsOfInfos(collect(read))
	for _, o := range objects {
		o.Line = lines[o.Obj]
	}
	return objects, errs, read
}

// yamlDocumentLines gives, for each document yaml.YAMLReader reads from
// data (empty ones included), the 1-based line of its first line that is
// not blank, a comment or a separator (0 for a document without one). It
// follows the reader: a line starting with "---" ends a document that has
// lines, and is the first line of the next otherwise. It returns nil where
// the reader fails (a separator followed by more than a comment).
func yamlDocumentLines(data []byte) []int {
	var starts []int
	inDocument := false
	for n := 1; len(data) > 0; n++ {
		line := data
		if end := bytes.IndexByte(data, '\n'); end >= 0 {
			line, data = data[:end], data[end+1:]
		} else {
			data = nil
		}
		trimmed := bytes.TrimSpace(line)
		if bytes.HasPrefix(line, []byte("---")) {
			if after := bytes.TrimSpace(line[3:]); len(after) > 0 && after[0] != '#' {
				return nil
			}
			if inDocument {
				inDocument = false
				continue
			}
		}
		if !inDocument {
			starts, inDocument = append(starts, 0), true
		}
		last := &starts[len(starts)-1]
		if *last == 0 && len(trimmed) > 0 && trimmed[0] != '#' && !bytes.HasPrefix(line, []byte("---")) {
			*last = n
		}
	}
	return starts
}

// lineOfOffset is the 1-based line of data's byte at offset.
func lineOfOffset(data []byte, offset int) int {
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// linesByDeclaration gives the infos the resource builder read from the
// documents of a file the lines of those documents: each info's is that
// of the next document declaring it (a List may declare several in a
// row). An info no document declares has 0. The documents are parsed again
// (yamldoc.Declares), which only files the builder reads pay.
func linesByDeclaration(docs []localDocument, infos []*resource.Info) []int {
	lines := make([]int, len(infos))
	next := 0
	for i, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		for k := next; k < len(docs); k++ {
			if docs[k].line > 0 && declares(docs[k].data, &Object{Obj: u}) {
				lines[i], next = docs[k].line, k
				break
			}
		}
	}
	return lines
}
