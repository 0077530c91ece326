package main

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// objectPrinter is a new printer of the object format output ("yaml",
// "json" or "kyaml", kubectl's formats), or nil for any other output. KYAML
// (kubectl 1.37's -o kyaml) is cli-runtime's printer, on
// sigs.k8s.io/yaml/kyaml; each object it prints starts with "---", and a
// YAMLPrinter separates the objects of its second and later calls with it.
func objectPrinter(output string) printers.ResourcePrinter {
	switch output {
	case "yaml":
		return &printers.YAMLPrinter{}
	case "json":
		return &printers.JSONPrinter{}
	case "kyaml":
		return &printers.KYAMLPrinter{}
	}
	return nil
}

// viewLastApplied is the last-applied record of live in output, a Secret's
// values redacted as lastapplied.View redacts them in every format: KYAML
// is printed from the redacted JSON.
func viewLastApplied(live *unstructured.Unstructured, output string) ([]byte, error) {
	switch output {
	case "kyaml":
	case "", "yaml", "json":
		return lastapplied.View(live, output, lastapplied.DigestKey{})
	default:
		return nil, fmt.Errorf(`output format must be "yaml", "json" or "kyaml", not %q`, output)
	}
	record, err := lastapplied.View(live, "json", lastapplied.DigestKey{})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := objectPrinter(output).PrintObj(&runtime.Unknown{Raw: record}, &out); err != nil {
		return nil, fmt.Errorf("converting the last-applied record of %s to KYAML: %w", live.GetName(), err)
	}
	return out.Bytes(), nil
}
