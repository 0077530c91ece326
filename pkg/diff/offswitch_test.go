package diff

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// TestSwitchedOffRendersWithTheLibrary: under KAPPLY_YAMLEMIT=off every
// side is sigs.k8s.io/yaml's, the same bytes as emitYAML's.
func TestSwitchedOffRendersWithTheLibrary(t *testing.T) {
	obj := benchDeployment()
	on, err := toYAML(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer func(was bool) { yamlEmitOn = was }(yamlEmitOn)
	yamlEmitOn = false
	off, err := toYAML(obj)
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if off != string(want) || on != off {
		t.Errorf("switched off:\n%s\nsigs.k8s.io/yaml:\n%s\nemitYAML:\n%s", off, want, on)
	}
}
