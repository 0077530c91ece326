package main

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

func TestVersionPrintsClientAndServer(t *testing.T) {
	testcluster.Require(t, cluster)
	r := kapply(t, "version")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "Client Version: ") || !strings.Contains(r.stdout, "Server Version: v1.37.1") {
		t.Errorf("unexpected output:\n%s", r.stdout)
	}
}

func TestVersionClientOnlyNeedsNoServer(t *testing.T) {
	var out strings.Builder
	r := kapplyNoCluster(t, &out, "version", "--client", "--server", "https://127.0.0.1:1")
	if r != 0 || !strings.HasPrefix(out.String(), "Client Version: ") || strings.Contains(out.String(), "Server") {
		t.Errorf("exit %d, output %q", r, out.String())
	}
}
