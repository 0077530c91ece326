package main

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/lastapplied"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

const review2Secret = `apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  pin: "%s"
`

// TestDiffOfSecretCreatesNoDigestKey: diff is read-only (kubectl's own
// promise), yet a diff of a Secret in a namespace without a digest key
// must not create kapply-digest-key; nor must diff -o events or
// diff --server-side. A user who may only read Secrets diffs them
// without error, values masked.
func TestDiffOfSecretCreatesNoDigestKey(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	secrets := dynamicClient(t).Resource(secretsGVR).Namespace(ns)
	dir := writeFiles(t, map[string]string{"s.yaml": strings.Replace(review2Secret, "%s", "123456", 1)})
	for _, args := range [][]string{
		{"diff", "-f", dir, "-n", ns},
		{"diff", "-f", dir, "-n", ns, "-o", "events"},
		{"diff", "--server-side", "-f", dir, "-n", ns},
	} {
		r := kapply(t, args...)
		if r.code != 1 {
			t.Errorf("%v: exit %d, want 1\nstderr %s", args, r.code, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "123456") {
			t.Errorf("%v printed the value", args)
		}
		if _, err := secrets.Get(ctx, lastapplied.DigestKeySecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%v (read-only) created Secret %s (get: %v)", args, lastapplied.DigestKeySecret, err)
		}
	}
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "s.yaml", strings.Replace(review2Secret, "%s", "654321", 1))
	reader := cluster.UserKubeconfig(t, ns, "secret-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}},
	})
	r := kapplyVia(t, reader, "diff", "--local", "-f", dir, "-n", ns)
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, "654321") || strings.Contains(r.stdout+r.stderr, "123456") {
		t.Errorf("read-only diff: exit %d (want 1, values masked)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
