package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

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

// TestVersionJSONHasKubectlShape: `-o json` is kubectl's document
// ({"clientVersion": {...}}), its client part filled from this build.
func TestVersionJSONHasKubectlShape(t *testing.T) {
	var out strings.Builder
	if r := kapplyNoCluster(t, &out, "version", "--client", "-o", "json"); r != 0 {
		t.Fatalf("exit %d, output %q", r, out.String())
	}
	var doc map[string]map[string]string
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	client := doc["clientVersion"]
	if len(doc) != 1 || client == nil {
		t.Fatalf("want only clientVersion, got %s", out.String())
	}
	want := map[string]string{"goVersion": runtime.Version(), "compiler": runtime.Compiler, "platform": runtime.GOOS + "/" + runtime.GOARCH}
	for key, value := range want {
		if client[key] != value {
			t.Errorf("clientVersion.%s = %q, want %q", key, client[key], value)
		}
	}
	for _, key := range []string{"gitVersion", "gitCommit", "gitTreeState", "buildDate"} {
		if _, ok := client[key]; !ok {
			t.Errorf("clientVersion.%s missing (kubectl always prints it)", key)
		}
	}
}

func TestVersionYAMLAndBadOutput(t *testing.T) {
	var out strings.Builder
	if r := kapplyNoCluster(t, &out, "version", "--client", "-o", "yaml"); r != 0 || !strings.HasPrefix(out.String(), "clientVersion:\n") {
		t.Errorf("-o yaml: exit %d, output %q", r, out.String())
	}
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
	if code := exitCode(run([]string{"version", "--client", "-o", "wide"}, streams), &errOut); code == 0 || !strings.Contains(errOut.String(), "--output must be 'yaml' or 'json'") {
		t.Errorf("-o wide: exit %d, stderr %q", code, errOut.String())
	}
}

// TestClientVersionFromLinkTime: the release build's -X values win, and
// the Kubernetes-style major and minor follow from the git version.
func TestClientVersionFromLinkTime(t *testing.T) {
	defer func(v, c, s, d string) { gitVersion, gitCommit, gitTreeState, buildDate = v, c, s, d }(gitVersion, gitCommit, gitTreeState, buildDate)
	gitVersion, gitCommit, gitTreeState, buildDate = "v1.4.2-SNAPSHOT-abc1234", "abc1234def", "dirty", "2026-11-25T16:00:00Z"
	got := clientVersion()
	if got.GitVersion != gitVersion || got.GitCommit != gitCommit || got.GitTreeState != "dirty" || got.BuildDate != buildDate || got.Major != "1" || got.Minor != "4" {
		t.Errorf("clientVersion() = %+v", got)
	}
}
