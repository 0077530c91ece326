package diff

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/merge"
)

func mustPath(t *testing.T, s string) fieldpath.Path {
	t.Helper()
	p, err := fieldpath.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTMLEscapesValuesMasksSecretsAndGivesReasons(t *testing.T) {
	const script = "<script>document.title='pwned'</script>"
	cm := configMapChange(t, "shop", "evil", "page", "plain", script)
	cm.Object.Changes = []merge.Change{{Path: mustPath(t, "data.page"), Old: "plain", New: script, Reason: merge.SetByFile}}
	secret := func(v string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "namespace": "shop"},
			"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(v))}}
	}
	sc, err := Compare(Object{Ref: "secret/creds -n shop", Live: secret("first-pass"), After: secret("second-pass"),
		Changes: []merge.Change{{Path: mustPath(t, "data.password"), Old: base64.StdEncoding.EncodeToString([]byte("first-pass")),
			New: base64.StdEncoding.EncodeToString([]byte("second-pass")), Reason: merge.SetByFile}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := HTML([]Comparison{cm, sc}, []Failure{{Identity: Identity{Kind: "Service", Namespace: "shop", Name: "<b>x</b>"}, File: "s.yaml", Line: 3, Message: "<img src=x onerror=alert(1)>"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{script, "<img", "<b>x", "first-pass", "second-pass",
		base64.StdEncoding.EncodeToString([]byte("first-pass")), base64.StdEncoding.EncodeToString([]byte("second-pass")), "http://", "https://"} {
		if strings.Contains(out, bad) {
			t.Errorf("the report holds %q", bad)
		}
	}
	if strings.Count(out, "<script") != 1 {
		t.Errorf("want the one script of the report, got %d", strings.Count(out, "<script"))
	}
	for _, want := range []string{"&lt;script&gt;document.title=", "&lt;img src=x onerror=alert(1)&gt;",
		`data-op="update" data-kind="ConfigMap"`, `data-op="failed" data-kind="Service"`, `data-filter-kind="Secret"`,
		"*** (before)", "*** (after)", "s.yaml:3", "script-src &#39;sha256-"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// The changed lines carry their reason, beside them and on hover.
	changed := regexp.MustCompile(`<div class="line (add|del)" title="([^"]*)"><span class="text">[^<]*</span><span class="why">`).FindAllStringSubmatch(out, -1)
	if len(changed) != 4 {
		t.Fatalf("want 4 changed lines with a reason, got %d:\n%s", len(changed), out)
	}
	for _, m := range changed {
		if !strings.Contains(m[2], "set by file") || strings.Contains(m[2], "-pass") {
			t.Errorf("reason %q", m[2])
		}
	}
}

func TestYAMLKeyPaths(t *testing.T) {
	lines := splitLines("metadata:\n  name: a\n  labels:\n    \"app.kubernetes.io/name\": web\nspec:\n  containers:\n  - name: web\n    args:\n    - x\n    script: |\n      a: b\n\n      c\n    image: nginx\n")
	want := []string{"metadata", "metadata.name", "metadata.labels", "metadata.labels.app.kubernetes.io/name", "spec", "spec.containers",
		"spec.containers.name", "spec.containers.args", "spec.containers.args", "spec.containers.script", "spec.containers.script",
		"spec.containers.script", "spec.containers.script", "spec.containers.image"}
	for i, keys := range yamlKeyPaths(lines) {
		if got := strings.Join(keys, "."); got != want[i] {
			t.Errorf("line %d %q: keys %q, want %q", i+1, lines[i], got, want[i])
		}
	}
}
