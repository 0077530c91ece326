package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Errors of documents the resource builder would change without a word,
// as kubectl's does: kapply refuses them instead.
var (
	// ErrDuplicateKey: a map sets one key twice (`data: {k: "1", k: "2"}`).
	// The YAML spec forbids it; the builder keeps one of the values.
	ErrDuplicateKey = errors.New("a key is set twice in one map; nothing of this document is applied")
	// ErrNotUTF8: the document holds bytes that are not UTF-8. The builder
	// replaces them with U+FFFD.
	ErrNotUTF8 = errors.New("not valid UTF-8; nothing of this document is applied")
)

// refuseLossyDocuments fails the objects of every document the builder
// would have changed without a word (see ErrDuplicateKey, ErrNotUTF8), in
// the inputs of checked (readLocal found them in the bytes it read: every
// file, stdin and URL but a kustomization's output, which is not checked;
// no input is read twice). It returns the other objects and one error per
// such document, naming the input, the document and the line.
func refuseLossyDocuments(objects []*Object, checked map[string][]lossyDocument) ([]*Object, []error) {
	bySource := map[string][]*Object{}
	var sources []string
	for _, o := range objects {
		if _, ok := bySource[o.Source]; !ok {
			sources = append(sources, o.Source)
		}
		bySource[o.Source] = append(bySource[o.Source], o)
	}
	refused := map[*Object]bool{}
	var errs []error
	for _, source := range sources {
		for _, d := range checked[source] {
			errs = append(errs, d.err)
			// What the builder read: invalid bytes replaced.
			doc := bytes.ToValidUTF8(d.doc, []byte("\uFFFD"))
			for _, o := range bySource[source] {
				if declares(doc, o) {
					refused[o] = true
				}
			}
		}
	}
	if len(refused) == 0 {
		return objects, errs
	}
	return slices.DeleteFunc(slices.Clone(objects), func(o *Object) bool { return refused[o] }), errs
}

// lossyDocument is a document refused, with its place in the file.
type lossyDocument struct {
	n   int
	doc []byte
	err error
}

// lossyDocumentsIn returns the documents of data, read from source, that
// the builder would change; none when data is UTF-16 (the builder decodes
// it by its byte order mark). Documents are checked in parallel: a strict
// parse costs about as much as the load (70 ms per MB).
func lossyDocumentsIn(source string, data []byte) []lossyDocument {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return nil
	}
	jobs := make(chan lossyDocument)
	var mu sync.Mutex
	var found []lossyDocument
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				if err := lossError(j.doc); err != nil {
					j.err = lossyError(source, j.n, err)
					mu.Lock()
					found = append(found, j)
					mu.Unlock()
				}
			}
		})
	}
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; {
		doc, err := reader.Read()
		if err != nil {
			break // io.EOF, or an error the load reported already
		}
		if isEmptyDocument(doc) {
			continue
		}
		jobs <- lossyDocument{n: n, doc: doc}
		n++
	}
	close(jobs)
	wg.Wait()
	slices.SortFunc(found, func(a, b lossyDocument) int { return a.n - b.n }) // the file's order
	return found
}

// lossyError is the error of document n of source, lost because of err.
func lossyError(source string, n int, err error) error {
	return fmt.Errorf("error parsing %s: document %d: %w", source, n, err)
}

// lossError tells why the builder would change doc, or nil. Other parse
// errors are the load's to report.
func lossError(doc []byte) error {
	if !utf8.Valid(doc) {
		line := 1 + bytes.Count(doc[:firstInvalid(doc)], []byte("\n"))
		return fmt.Errorf("line %d: %w", line, ErrNotUTF8)
	}
	if err, isJSON := jsonDuplicateKey(doc); isJSON {
		return err
	}
	if plainUniqueKeys(doc) {
		return nil
	}
	_, err := sigsyaml.YAMLToJSONStrict(doc)
	if err == nil {
		return collidingKeys(doc)
	}
	if !strings.Contains(err.Error(), "already set in map") {
		return nil
	}
	// The strict parse also refuses a key a merge key (<<) brings that the
	// map, or another map merged, sets too: valid YAML, of which the builder
	// keeps one value, yaml.v2's (by the keys' order), as kubectl does.
	// Only a key written twice in one map is refused then.
	twice := map[string]bool{}
	if bytes.Contains(doc, []byte("<<")) {
		written, ok := keysWrittenTwice(doc)
		if ok && len(written) == 0 {
			return collidingKeys(doc)
		}
		twice = written
	}
	var lines, named []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if key, isDuplicate := duplicateKeyOf(line); isDuplicate {
			lines = append(lines, line)
			if twice[key] {
				named = append(named, line)
			}
		}
	}
	if len(named) > 0 {
		lines = named // the lines of the keys written twice, not those merged
	}
	return fmt.Errorf("%s: %w", strings.Join(lines, "; "), ErrDuplicateKey)
}

// duplicateKeyOf reads yaml.v2's strict error line "line N: key K already
// set in map": K, formatted %#v, and true.
func duplicateKeyOf(line string) (string, bool) {
	_, rest, found := strings.Cut(line, ": key ")
	key, isDuplicate := strings.CutSuffix(rest, " already set in map")
	return key, found && isDuplicate
}

// collidingKeys finds two keys of one map of doc that differ in YAML and
// are one string in JSON (1 and "1", true and "true", two floats alike to
// 7 digits): the builder converts keys to strings in map order, so either
// value is kept, one run or the other. The strict parse sees two keys.
func collidingKeys(doc []byte) error {
	var v any
	if yamlv2.Unmarshal(doc, &v) != nil {
		return nil // the load reports it
	}
	return collision(v, 0)
}

func collision(v any, depth int) error {
	if depth > maxDepth {
		return nil // the load refuses it
	}
	switch v := v.(type) {
	case map[any]any:
		// The first collision by JSON key, then each value by JSON key:
		// the same message whatever the map order.
		values := make(map[string]any, len(v))
		var colliding map[string]bool // rare: keys are formatted only then
		for k, e := range v {
			key, ok := jsonKey(k)
			if !ok {
				continue // the load refuses it
			}
			if _, twice := values[key]; twice {
				if colliding == nil {
					colliding = map[string]bool{}
				}
				colliding[key] = true
			}
			values[key] = e
		}
		if colliding != nil {
			key := slices.Min(slices.Collect(maps.Keys(colliding)))
			var yamlKeys []string
			for k := range v {
				if s, ok := jsonKey(k); ok && s == key {
					yamlKeys = append(yamlKeys, fmt.Sprintf("%#v", k))
				}
			}
			slices.Sort(yamlKeys)
			return fmt.Errorf("keys %s of one map all become %q in JSON: %w", strings.Join(yamlKeys, ", "), key, ErrDuplicateKey)
		}
		keys := slices.Sorted(maps.Keys(values))
		for _, key := range keys {
			if err := collision(values[key], depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := collision(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonDuplicateKey finds a key set twice in an object of doc when doc is
// JSON (Go's decoder, like the builder, keeps the last value), naming the
// first such key by its path; isJSON is false when doc is not JSON, for
// the YAML check. doc may hold several JSON values one after another:
// encoding/json splits them, sigs.k8s.io/json's strict decoding (the
// apiserver's own) checks each.
func jsonDuplicateKey(doc []byte) (err error, isJSON bool) {
	if trimmed := bytes.TrimSpace(doc); len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	var found error
	for {
		var value json.RawMessage
		err := dec.Decode(&value)
		if errors.Is(err, io.EOF) {
			return found, true
		}
		if err != nil {
			return nil, false // not JSON (a YAML flow map, say)
		}
		if found != nil {
			continue
		}
		var v any
		strict, err := kjson.UnmarshalStrict(value, &v, kjson.DisallowDuplicateFields)
		if err == nil && len(strict) > 0 {
			found = fmt.Errorf("%w: %w", strict[0], ErrDuplicateKey)
		}
	}
}

// firstInvalid is the offset of the first byte of doc that is not UTF-8.
func firstInvalid(doc []byte) int {
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(doc)
}
