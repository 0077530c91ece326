package jsonmap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
)

// realObjects returns the objects of the real-world manifests as JSON.
func realObjects(t testing.TB) [][]byte {
	realworld := fixture.RealWorldDir(t)
	files, err := filepath.Glob(filepath.Join(realworld, "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Skipf("no manifests in %s (%v)", realworld, err)
	}
	var objects [][]byte
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("reading %s: %v", file, err)
			}
			obj, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("converting %s to JSON: %v", file, err)
			}
			if !bytes.Equal(obj, []byte("null")) {
				objects = append(objects, obj)
			}
		}
	}
	return objects
}

func TestAgreesOnRealManifests(t *testing.T) {
	objects := realObjects(t)
	for i, obj := range objects {
		var indented bytes.Buffer
		if err := json.Indent(&indented, obj, "", "\t"); err != nil {
			t.Fatal(err)
		}
		for _, data := range [][]byte{obj, indented.Bytes()} {
			if err := disagreement(data); err != nil {
				t.Errorf("object %d: %.300v", i, err)
			}
		}
	}
	list := []byte(`{"apiVersion":"v1","kind":"List","metadata":{},"items":[` + string(bytes.Join(objects, []byte(","))) + `]}`)
	if err := listDisagreement(list); err != nil {
		t.Errorf("the list of all: %.300v", err)
	}
}
