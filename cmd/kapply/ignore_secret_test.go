package main

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestRespectIgnoreSecretDataKeyOfStringData: a rule on /data/a of a
// Secret whose file writes stringData.a hid a's change from the diff,
// but apply --respect-ignore copied live's data.a and left stringData.a,
// which the server writes over data: the live value was overwritten, on
// the real server, client-side and server-side. It is kept now, and the
// other key the file writes through stringData is still written.
func TestRespectIgnoreSecretDataKeyOfStringData(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	secret := func(a, b string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: s1}\nstringData: {a: " + a + ", b: " + b + "}\n"
	}
	secrets := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns)
	for _, mode := range [][]string{nil, {"--server-side", "--force-conflicts"}} {
		dir := writeFiles(t, map[string]string{"s.yaml": secret("liveAAA1", "liveBBB1")})
		if r := kapply(t, append([]string{"apply", "-f", dir, "-n", ns}, mode...)...); r.code != 0 {
			t.Fatalf("apply %v: exit %d: %s", mode, r.code, r.stderr)
		}
		writeFile(t, dir, "s.yaml", secret("fileAAA2", "fileBBB2"))
		if r := kapply(t, "diff", "-f", dir, "-n", ns, "--ignore", "kind=Secret,pointer=/data/a", "--explain"); r.code != 1 {
			t.Fatalf("diff %v: exit %d, want 1 (b changes): %s", mode, r.code, r.stderr)
		}
		args := append([]string{"apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", "kind=Secret,pointer=/data/a"}, mode...)
		if r := kapply(t, args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		live, err := secrets.Get(context.Background(), "s1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := live.Object["data"].(map[string]any)
		if data["a"] != b64("liveAAA1") || data["b"] != b64("fileBBB2") {
			t.Errorf("%v: data.a kept live: %v, data.b the file's: %v; want a kept, b written", mode, data["a"] == b64("liveAAA1"), data["b"] == b64("fileBBB2"))
		}
		if err := secrets.Delete(context.Background(), "s1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
