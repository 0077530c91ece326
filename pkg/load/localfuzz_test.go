package load

import (
	"math/rand/v2"
	"testing"
)

// FuzzReadLocal: readLocal gives the builder's objects, errors and refused
// documents for any one file, YAML or (json set) JSON by its name. go test
// runs the seeds and testdata/fuzz/FuzzReadLocal; fuzz with
// go test -fuzz FuzzReadLocal ./pkg/load
func FuzzReadLocal(f *testing.F) {
	g := &yamlGen{r: rand.New(rand.NewPCG(3, 4))}
	for range 20 {
		f.Add(g.file(), false)
	}
	f.Add([]byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v", "k": "w"}}`), true)
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, json bool) {
		name := "f.yaml"
		if json {
			name = "f.json"
		}
		dir := t.TempDir()
		writeFiles(t, dir, map[string][]byte{name: data})
		compareWithBuilder(t, Files{Filenames: []string{dir}}, "")
	})
}
