package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	runtimeobj "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// splitInput reads the input and splits it as the builder's
// YAMLOrJSONDecoder does, or sets why the builder must read it.
func splitInput(ctx context.Context, in input, files Files) *localFile {
	f := &localFile{input: in}
	if f.data, f.readErr = readInput(ctx, in, files); f.readErr != nil {
		f.fallback = fallbackUnread
		return f
	}
	f.checked = true
	if !localReadOn {
		f.fallback = fallbackOff
		return f
	}
	// The builder decodes by the byte order mark, and replaces bytes that
	// are not UTF-8.
	if bytes.HasPrefix(f.data, []byte{0xef, 0xbb, 0xbf}) || bytes.HasPrefix(f.data, []byte{0xff, 0xfe}) ||
		bytes.HasPrefix(f.data, []byte{0xfe, 0xff}) || !utf8.Valid(f.data) {
		f.fallback = fallbackEncoding
		return f
	}
	// As yaml.GuessJSONStream: JSON when the first 4096 bytes, less
	// leading blanks, open with '{'.
	if yaml.IsJSONBuffer(f.data[:min(len(f.data), 4096)]) {
		f.json = true
		f.fallback = splitJSON(f)
		return f
	}
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(f.data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			numberDocuments(f)
			return f
		}
		if err != nil {
			f.fallback = fallbackSplit
			return f
		}
		f.docs = append(f.docs, localDocument{data: doc})
	}
}

// numberDocuments sets the line of each YAML document of f, when the
// documents are those yamlDocumentLines counts.
func numberDocuments(f *localFile) {
	lines := yamlDocumentLines(f.data)
	if len(lines) != len(f.docs) {
		return
	}
	for i := range f.docs {
		f.docs[i].line = lines[i]
	}
}

// splitJSON splits f's data into the values of a JSON stream, as the
// builder's json.Decoder reads them into a RawExtension (null: nothing).
// A stream the decoder stops in, the builder reads again as YAML from
// there (or fails): readLocal leaves that to the builder.
func splitJSON(f *localFile) string {
	dec := json.NewDecoder(bytes.NewReader(f.data))
	for {
		var ext runtimeobj.RawExtension
		err := dec.Decode(&ext)
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			return fallbackJSON
		}
		// The value's first byte: the decoder stops right after it.
		line := lineOfOffset(f.data, int(dec.InputOffset())-len(ext.Raw))
		f.docs = append(f.docs, localDocument{data: ext.Raw, line: line})
	}
}
