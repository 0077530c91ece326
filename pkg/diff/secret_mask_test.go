package diff

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

func maskedSecret() map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"k":"dmFsdWUtb25l"}}`, "team": "a"}},
		"data":       map[string]any{"k": base64.StdEncoding.EncodeToString([]byte("value-one")), "pin": base64.StdEncoding.EncodeToString([]byte("42"))},
		"stringData": map[string]any{"p": "pass \"word\"\n2"}}
}

// TestMaskSecret: values and the record annotation are masked, other
// annotations kept, the input untouched; other kinds are returned as they
// are.
func TestMaskSecret(t *testing.T) {
	in := maskedSecret()
	before := maskedSecret()
	out := MaskSecret(in)
	if !reflect.DeepEqual(in, before) {
		t.Errorf("the input changed: %v", in)
	}
	want := map[string]any{"k": "***", "pin": "***"}
	annotations := out["metadata"].(map[string]any)["annotations"].(map[string]any)
	if !reflect.DeepEqual(out["data"], want) || out["stringData"].(map[string]any)["p"] != "***" ||
		annotations["kubectl.kubernetes.io/last-applied-configuration"] != "***" || annotations["team"] != "a" {
		t.Errorf("masked: %v", out)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}
	if got := MaskSecret(cm); !reflect.DeepEqual(got, cm) {
		t.Errorf("a ConfigMap was masked: %v", got)
	}
}

// TestComparePrunedSecretIsMasked: a Secret apply would prune (no After)
// shows its values and its record masked, and --explain says why it goes.
func TestComparePrunedSecretIsMasked(t *testing.T) {
	for _, showManaged := range []bool{false, true} {
		c, err := Compare(Object{Name: "v1.Secret.ns.s", Ref: "secret/s", Live: maskedSecret()}, Options{ShowManaged: showManaged, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		text, err := Printer{Options: Options{Explain: true}}.render(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, leaked := range []string{"dmFsdWUtb25l", "value-one", base64.StdEncoding.EncodeToString([]byte("42")), "word"} {
			if strings.Contains(text, leaked) {
				t.Errorf("show-managed %v: %q shown:\n%s", showManaged, leaked, text)
			}
		}
		if c.Outcome != Deleted || !strings.Contains(text, "-  k: '***'") || !strings.Contains(text, "# why: pruned: no file declares it\n") {
			t.Errorf("show-managed %v: outcome %v\n%s", showManaged, c.Outcome, text)
		}
	}
}
