package main

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/dynamic"

	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
	"github.com/kapply/kapply/pkg/shown"
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
// values redacted under k as lastapplied.View redacts them in every
// format: KYAML is printed from the redacted JSON.
func viewLastApplied(live *unstructured.Unstructured, output string, k lastapplied.DigestKey) ([]byte, error) {
	switch output {
	case "kyaml":
	case "", "yaml", "json":
		return lastapplied.View(live, output, k)
	default:
		return nil, fmt.Errorf(`output format must be "yaml", "json" or "kyaml", not %q`, output)
	}
	record, err := lastapplied.View(live, "json", k)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := objectPrinter(output).PrintObj(&runtime.Unknown{Raw: record}, &out); err != nil {
		return nil, fmt.Errorf("converting the last-applied record of %s to KYAML: %w", shown.Text(live.GetName()), err)
	}
	return out.Bytes(), nil
}

// viewKeys gives the digest key a Secret's plain record is redacted
// under for the view: its namespace's, read and never created
// (kcluster.RunKey). Without one (no client, no right to read it), the
// view shows lastapplied.Hidden in place of each value.
func viewKeys(getter genericclioptions.RESTClientGetter) func(context.Context, *unstructured.Unstructured) lastapplied.DigestKey {
	var keys *kcluster.DigestKeys
	if cfg, err := getter.ToRESTConfig(); err == nil {
		if client, err := dynamic.NewForConfig(cfg); err == nil {
			keys = &kcluster.DigestKeys{Client: client, Mode: kcluster.RunKey}
		}
	}
	return func(ctx context.Context, live *unstructured.Unstructured) lastapplied.DigestKey {
		if keys == nil || !secretmask.IsSecret(live.Object) {
			return lastapplied.DigestKey{}
		}
		k, err := keys.For(ctx, live.GetNamespace())
		if err != nil {
			return lastapplied.DigestKey{} // the view shows Hidden values
		}
		return k
	}
}
