package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
)

// TestErrorsOfObjectsWithoutRecordQuoteTheName (review of issue 31.1): a Role created without a
// last-applied record (kubectl create), its name an escape sequence:
// commands that need the record say it has none, the name quoted; so does
// last-applied view, whose YAML encoder refuses the name's C1 character.
// Before: "no last-applied-configuration annotation found on resource:
// NAME" and "converting the last-applied record of NAME" printed it raw.
// moreControls are characters that do not show as themselves, beyond
// rawControls: NEL and CSI (C1), BOM and zero-width joiner (format), DEL, NUL.
const moreControls = rawControls + "\u0085\ufeff\u200d\u009b\x7f\x00"

func noRawControls(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexAny(out, moreControls); i >= 0 {
		t.Errorf("%s: a raw control character reached the output at %d:\n%q", what, i, out)
	}
}

func TestErrorsOfObjectsWithoutRecordQuoteTheName(t *testing.T) {
	ns := cluster.Namespace(t)
	name := "norec\x1b[2K\rforged\u009b2J"
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": name}, "rules": []any{},
	}}
	gvr := k8sschema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	if _, err := dynamicClient(t).Resource(gvr).Namespace(ns).Create(context.Background(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"r.yaml": hostileRoleYAML(name)})
	for _, args := range [][]string{
		{"last-applied", "view", "-f", dir}, {"last-applied", "view", "-o", "json", "-f", dir},
		{"last-applied", "view", "-o", "kyaml", "-f", dir},
		{"status", "-f", dir}, {"release", "--field", "rules", "-f", dir},
		{"migrate", "--to=server-side", "-f", dir}, {"adopt", "-f", dir},
		{"diff", "-f", dir}, {"apply", "-f", dir},
		{"last-applied", "view", "-f", dir},
	} {
		r := kapply(t, append(args, "-n", ns)...)
		what := strings.Join(args[:2], " ")
		noRawControls(t, what+" stdout", r.stdout)
		noRawControls(t, what+" stderr", r.stderr)
	}
}
