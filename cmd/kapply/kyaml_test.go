package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestKYAMLOutputReadByKubectl: apply -o kyaml, export -o kyaml and
// last-applied view -o kyaml print KYAML (each document "---" then a
// flow mapping) that kubectl v1.37 reads back (create --dry-run=client)
// as the same objects -o json prints; a Secret's values are masked in
// KYAML as in the other formats.
func TestKYAMLOutputReadByKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"objects.yaml": outputsSecret()})
	kubectlPath := testcluster.FindKubectl137(t) // "": KYAML read with apimachinery's YAML decoder instead

	applied := mustRun(t, "apply", "-f", dir, "-n", ns, "-o", "kyaml")
	assertNoRecordValue(t, "apply -o kyaml", applied)
	if !strings.HasPrefix(applied.stdout, "---\n{\n") {
		t.Errorf("apply -o kyaml: not KYAML:\n%s", applied.stdout)
	}
	objects := readObjects(t, kubectlPath, applied.stdout)
	if len(objects) != 2 || objects[0]["kind"] != "Secret" || objects[1]["kind"] != "ConfigMap" {
		t.Fatalf("apply -o kyaml read back: %v", objects)
	}
	if data := objects[0]["data"].(map[string]any); data["alpha"] != "***" {
		t.Errorf("apply -o kyaml: the Secret's data read back is %v, want masked", data)
	}

	for _, args := range [][]string{
		{"export", "secret/out", "configmap/beside", "-n", ns},
		{"last-applied", "view", "secret/out", "configmap/beside", "-n", ns},
	} {
		what := strings.Join(args[:len(args)-2], " ")
		kyaml := mustRun(t, append(args, "-o", "kyaml")...)
		assertNoRecordValue(t, what+" -o kyaml", kyaml)
		if strings.Count(kyaml.stdout, "---\n{\n") != 2 {
			t.Errorf("%s -o kyaml: not two KYAML documents:\n%s", what, kyaml.stdout)
		}
		asJSON := mustRun(t, append(args, "-o", "json")...)
		if got, want := readObjects(t, kubectlPath, kyaml.stdout), decodeJSONStream(t, asJSON.stdout); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: -o kyaml read back differs from -o json:\nkyaml: %v\njson:  %v", what, got, want)
		}
	}
	if r := kapply(t, "last-applied", "view", "configmap/beside", "-n", ns, "-o", "toml"); r.code == 0 || !strings.Contains(r.stderr, `"yaml", "json" or "kyaml"`) {
		t.Errorf("last-applied view -o toml: exit %d\n%s", r.code, r.stderr)
	}
}

// readObjects is the objects of a YAML stream as kubectl v1.37 reads them
// (create --dry-run=client -o json; a List's items), or, without that
// kubectl, as apimachinery's YAML decoder reads them.
func readObjects(t *testing.T, kubectlPath, text string) []map[string]any {
	t.Helper()
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if kubectlPath == "" {
		return decodeYAMLStream(t, text)
	}
	r := runKubectl137(t, kubectlPath, "create", "--dry-run=client", "--validate=false", "-o", "json", "-f", file)
	if r.code != 0 {
		t.Fatalf("kubectl v1.37 does not read the KYAML: exit %d\n%s\n%s", r.code, r.stderr, text)
	}
	return decodeJSONStream(t, r.stdout)
}

// decodeJSONStream decodes a stream of JSON objects, a List's items in
// their place.
func decodeJSONStream(t *testing.T, text string) []map[string]any {
	t.Helper()
	var objects []map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	for dec.More() {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("decoding %q: %v", text, err)
		}
		if obj["kind"] != "List" {
			objects = append(objects, obj)
			continue
		}
		for _, item := range obj["items"].([]any) {
			objects = append(objects, item.(map[string]any))
		}
	}
	return objects
}

// decodeYAMLStream decodes each document of a YAML stream, a List's items
// in its place, as kubectl's reader would, without a server.
func decodeYAMLStream(t *testing.T, text string) []map[string]any {
	t.Helper()
	var objects []map[string]any
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		var obj map[string]any
		err := decoder.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objects
		}
		if err != nil {
			t.Fatalf("decoding the KYAML: %v\n%s", err, text)
		}
		if obj == nil {
			continue
		}
		if items, ok := obj["items"].([]any); ok && strings.HasSuffix(fmt.Sprint(obj["kind"]), "List") {
			for _, item := range items {
				objects = append(objects, item.(map[string]any))
			}
			continue
		}
		objects = append(objects, obj)
	}
}
