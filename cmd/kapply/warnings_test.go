package main

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestOwnershipCommandsMaskSecretsInWarnings: a server warning on a write
// that quotes a Secret's value (as an admission webhook's may) is printed
// by the ownership commands as kubectl prints warnings, "Warning: TEXT",
// with the value masked, plain or base64.
func TestOwnershipCommandsMaskSecretsInWarnings(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const value = "hunter2-s3cr3t"
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	dir := writeFiles(t, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: " + encoded + "}\n"})
	kubectl(t, "create", "secret", "generic", "creds", "-n", ns, "--from-literal=password="+value)
	proxy := cluster.StartProxy(t)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method == http.MethodGet {
			return testcluster.Pass
		}
		return testcluster.Fault{Warning: "webhook saw password=" + value + " data=" + encoded}
	})
	for _, args := range [][]string{
		{"adopt", "-f", dir + "/s.yaml", "--dry-run=server"},
		{"last-applied", "set", "-f", dir + "/s.yaml", "--create-annotation", "--dry-run=server"},
		{"adopt", "-f", dir + "/s.yaml"},
		{"release", "-f", dir + "/s.yaml", "--field", "data.password", "--dry-run=server"},
	} {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		exitCode(run(append(args, "-n", ns, "--kubeconfig", proxy.Kubeconfig), streams), &errOut)
		all := out.String() + errOut.String()
		if strings.Contains(all, value) || strings.Contains(all, encoded) {
			t.Errorf("%v printed the Secret's value:\n%s", args, all)
		}
		if !strings.Contains(errOut.String(), "Warning: webhook saw password=") {
			t.Errorf("%v: no warning printed:\n%s", args, errOut.String())
		}
	}
}
