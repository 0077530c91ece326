package release

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewManifest is the part of krew's Plugin (index/v1alpha2) checked here.
type krewManifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			URI      string `json:"uri"`
			Sha256   string `json:"sha256"`
			Bin      string `json:"bin"`
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"platforms"`
	} `json:"spec"`
}

// checkKrewManifest: goreleaser's krew manifest names one platform per
// archive, with the archive's sum from the checksums file and its URL on
// the release; krew's validate-krew-manifest accepts it and installs every
// platform from it (archives served on 127.0.0.1 in the release's place),
// and refuses it once a sum is wrong, so the install really ran.
func checkKrewManifest(t *testing.T, s snapshot) {
	path := filepath.Join(s.dist, "krew", "kapply.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("krew manifest: %v", err)
	}
	var m krewManifest
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if m.Kind != "Plugin" || m.Metadata.Name != "kapply" || m.Spec.Version != "v"+s.version {
		t.Errorf("%s: kind %q, name %q, version %q", path, m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	if len(m.Spec.Platforms) != len(platforms) {
		t.Errorf("%s: %d platforms, want %d", path, len(m.Spec.Platforms), len(platforms))
	}
	server := httptest.NewServer(http.FileServer(http.Dir(s.dist)))
	defer server.Close()
	local := string(raw)
	for _, p := range m.Spec.Platforms {
		goos, goarch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		name := archiveName(s.version, goos, goarch)
		wantURI := "https://github.com/kapply/kapply/releases/download/" + s.tag + "/" + name
		wantBin := "kapply"
		if goos == "windows" {
			wantBin = "kapply.exe"
		}
		if p.URI != wantURI || p.Sha256 != s.checksums[name] || p.Bin != wantBin {
			t.Errorf("%s/%s: uri %q, sha256 %q, bin %q; want %q, %q, %q", goos, goarch, p.URI, p.Sha256, p.Bin, wantURI, s.checksums[name], wantBin)
		}
		local = strings.ReplaceAll(local, p.URI, server.URL+"/"+name)
	}

	validate := krewTools(t, s.root)
	if out, err := validate(local); err != nil {
		t.Errorf("validate-krew-manifest: %v\n%s", err, out)
	}
	first := m.Spec.Platforms[0].Sha256
	wrong := strings.Replace(local, first, strings.Repeat("a", len(first)), 1)
	if out, err := validate(wrong); err == nil || !strings.Contains(out, "checksum does not match") {
		t.Errorf("validate-krew-manifest accepted a wrong sha256: %v\n%s", err, out)
	}
}

// krewTools builds krew and validate-krew-manifest from hack/tools/krew
// (pinned there, apart from kapply's go.mod) and returns a function that
// validates a manifest's text, saved as kapply.yaml as the plugin name
// requires. validate-krew-manifest installs each platform by running
// `kubectl krew install --manifest`; kubectl's only part in that is to run
// the kubectl-krew plugin, so a two-line kubectl stands in for it.
func krewTools(t *testing.T, root string) func(manifest string) (string, error) {
	t.Helper()
	tools := filepath.Join(root, "bin", "tools")
	for _, tool := range []string{"krew", "validate-krew-manifest"} {
		cmd := exec.Command("nice", "go", "build", "-o", filepath.Join(tools, tool), "sigs.k8s.io/krew/cmd/"+tool)
		cmd.Dir = filepath.Join(root, "hack", "tools", "krew")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", tool, err, out)
		}
	}
	shimDir := t.TempDir()
	shim := "#!/bin/sh\n[ \"$1\" = krew ] || { echo \"kubectl stand-in: only 'krew' is served\" >&2; exit 1; }\nshift\nexec " +
		filepath.Join(tools, "krew") + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shimDir, "kubectl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	return func(manifest string) (string, error) {
		dir := t.TempDir()
		path := filepath.Join(dir, "kapply.yaml")
		if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(tools, "validate-krew-manifest"), "-manifest", path)
		cmd.Env = append(os.Environ(), "PATH="+shimDir+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}
