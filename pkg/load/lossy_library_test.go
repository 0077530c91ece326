package load

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/modroot"
)

// duplicateGolden holds, per corpus file, what the duplicate-key check
// answered for each variant of each document. It was written by the
// hand-written token reader jsonDuplicateKey replaced by sigs.k8s.io/json
// (strict, DisallowDuplicateFields): the library must answer the same.
const duplicateGolden = "testdata/duplicate_keys.golden"

var updateDuplicates = flag.Bool("update-duplicates", false, "rewrite "+duplicateGolden)

// TestDuplicateKeysAsBefore: on the project's corpora (../shared/realworld,
// testdata, lossErrorCases), each document as written, as compact and as
// indented JSON, and as JSON with a key set twice at the top and in
// metadata, the check finds the same documents JSON, the same keys set
// twice, and lossError refuses the same documents as the hand-written
// reader did (duplicateGolden). Rewrite with -update-duplicates.
func TestDuplicateKeysAsBefore(t *testing.T) {
	var lines []string
	root, err := modroot.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "testdata"), fixture.RealWorldDir(t)} {
		files := yamlFilesUnder(t, dir)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(filepath.Dir(dir), file)
			lines = append(lines, duplicateVerdicts(filepath.ToSlash(rel), documentsOf(data)))
		}
	}
	var cases [][]byte
	for _, c := range lossErrorCases {
		cases = append(cases, []byte(c.doc))
	}
	lines = append(lines, duplicateVerdicts("lossErrorCases", cases))
	got := strings.Join(lines, "\n") + "\n"
	if *updateDuplicates {
		if err := os.WriteFile(duplicateGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(duplicateGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the duplicate-key check answers differently from the hand-written reader:\n%s\nwant\n%s", got, want)
	}
}

// duplicateVerdicts is one golden line: the counts over the variants of
// docs, and a digest of each variant's verdict in order.
func duplicateVerdicts(name string, docs [][]byte) string {
	sum := sha256.New()
	var variants, isJSON, twice, refused int
	for _, doc := range docs {
		for _, v := range documentVariants(doc) {
			err, j := jsonDuplicateKey(v)
			lossy := lossError(v)
			verdict := fmt.Sprintf("%t %t %t|", j, errors.Is(err, ErrDuplicateKey), errors.Is(lossy, ErrDuplicateKey))
			sum.Write([]byte(verdict))
			variants++
			isJSON += count(j)
			twice += count(errors.Is(err, ErrDuplicateKey))
			refused += count(errors.Is(lossy, ErrDuplicateKey))
		}
	}
	return fmt.Sprintf("%s docs=%d variants=%d json=%d twice=%d refused=%d digest=%x",
		name, len(docs), variants, isJSON, twice, refused, sum.Sum(nil)[:8])
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// documentVariants are doc, and when it converts to JSON: compact,
// indented, with "kind" set twice at the top, and with "name" set twice
// in metadata.
func documentVariants(doc []byte) [][]byte {
	out := [][]byte{doc}
	compact, err := sigsyaml.YAMLToJSON(doc)
	if err != nil || !bytes.HasPrefix(compact, []byte(`{"`)) {
		return out
	}
	var indented bytes.Buffer
	if json.Indent(&indented, compact, "", "  ") == nil {
		out = append(out, indented.Bytes())
	}
	kindTwice := append([]byte(`{"kind":"Twice",`), compact[1:]...)
	nameTwice := bytes.Replace(compact, []byte(`"metadata":{`), []byte(`"metadata":{"name":"twice",`), 1)
	return append(out, compact, kindTwice, nameTwice)
}

// documentsOf splits a YAML stream into its non-empty documents.
func documentsOf(data []byte) [][]byte {
	var docs [][]byte
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) || err != nil {
			return docs
		}
		if !isEmptyDocument(doc) {
			docs = append(docs, doc)
		}
	}
}

// yamlFilesUnder lists the .yaml, .yml and .json files under dir, in
// lexical order.
func yamlFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
