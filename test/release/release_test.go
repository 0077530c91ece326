// Package release runs `make release-snapshot` (goreleaser --snapshot
// --clean, pinned in hack/tools/goreleaser) into a temporary folder and
// checks what a release would publish: an archive per platform holding the
// right binary, the LICENSE and the README, the checksums file, the
// version the binaries report, and the krew manifest, installed for every
// platform by krew's own validate-krew-manifest.
package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/kapply/kapply/internal/testcluster"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// platforms are the release's targets, as goreleaser names them.
var platforms = []struct{ os, arch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// snapshot is what one release-snapshot run left in dist.
type snapshot struct {
	root, dist string
	version    string            // goreleaser's, without the leading v
	tag        string            // the release's git tag (v0.0.0 before the first)
	checksums  map[string]string // archive name -> sha256 hex
}

func archiveName(version, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return "kapply_" + version + "_" + goos + "_" + goarch + ext
}

func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds goreleaser and kapply for six platforms (minutes from a cold Go cache)")
	}
	for _, tool := range []string{"bash", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			testcluster.Missing(t, "%s not on PATH: %v", tool, err)
		}
	}
	s := runSnapshot(t)
	license, err := os.ReadFile(filepath.Join(s.root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms {
		name := archiveName(s.version, p.os, p.arch)
		t.Run(p.os+"_"+p.arch, func(t *testing.T) {
			checkArchive(t, s, name, p.os, p.arch, license)
		})
	}
	t.Run("krew", func(t *testing.T) { checkKrewManifest(t, s) })
}

// runSnapshot runs `make release-snapshot DIST=...` and reads the version
// and the checksums file it wrote.
func runSnapshot(t *testing.T) snapshot {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{root: root, dist: filepath.Join(t.TempDir(), "dist")}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "release-snapshot", "DIST="+s.dist)
	cmd.Dir = root
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release-snapshot: %v\n%s", err, out)
	}
	t.Logf("make release-snapshot took %s", time.Since(start).Round(time.Second))

	var metadata struct {
		Version string `json:"version"`
		Tag     string `json:"tag"`
	}
	readJSON(t, filepath.Join(s.dist, "metadata.json"), &metadata)
	if !strings.Contains(metadata.Version, "-SNAPSHOT-") {
		t.Fatalf("metadata.json version %q is not a snapshot's", metadata.Version)
	}
	s.version, s.tag = metadata.Version, metadata.Tag
	s.checksums = readChecksums(t, filepath.Join(s.dist, "kapply_"+s.version+"_checksums.txt"))
	if len(s.checksums) != len(platforms) {
		t.Errorf("checksums file lists %d files, want the %d archives: %v", len(s.checksums), len(platforms), s.checksums)
	}
	return s
}

// readChecksums parses sha256sum's format, "HEX  NAME" a line.
func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("checksums file: %v", err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 || len(fields[0]) != 64 {
			t.Fatalf("%s: bad line %q", path, line)
		}
		sums[fields[1]] = fields[0]
	}
	return sums
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checkArchive: the archive is in the checksums file with its true sum and
// holds exactly the binaries for its platform (kapply carrying the
// release's version; kubectl_complete-kapply), the LICENSE and the README; the linux/amd64 binary, on such a
// host, reports the version kubectl's way.
func checkArchive(t *testing.T, s snapshot, name, goos, goarch string, license []byte) {
	path := filepath.Join(s.dist, name)
	if got, want := sha256File(t, path), s.checksums[name]; got != want {
		t.Fatalf("%s: sha256 %s, checksums file says %q", name, got, want)
	}
	files := readArchive(t, path)
	bin, complete := "kapply", "kubectl_complete-kapply"
	if goos == "windows" {
		bin, complete = bin+".exe", complete+".exe"
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	if len(files) != 4 || files[bin] == nil || files[complete] == nil || files["LICENSE"] == nil || files["README.md"] == nil {
		t.Fatalf("%s holds %v, want %s, %s, LICENSE and README.md", name, names, bin, complete)
	}
	if err := checkExecutable(files[complete], goos, goarch); err != nil {
		t.Errorf("%s: %s: %v", name, complete, err)
	}
	if !bytes.Equal(files["LICENSE"], license) {
		t.Errorf("%s: LICENSE differs from the repository's", name)
	}
	if err := checkExecutable(files[bin], goos, goarch); err != nil {
		t.Errorf("%s: %s: %v", name, bin, err)
	}
	if !bytes.Contains(files[bin], []byte("v"+s.version)) {
		t.Errorf("%s: %s does not carry its version v%s (ldflags)", name, bin, s.version)
	}
	if goos == runtime.GOOS && goarch == runtime.GOARCH {
		checkVersionCommand(t, s, files[bin])
	}
}

// checkVersionCommand runs the extracted binary's `version -o json` and
// `version --client` and compares them with the build: goreleaser's
// version, the work tree's commit.
func checkVersionCommand(t *testing.T, s snapshot, binary []byte) {
	path := filepath.Join(t.TempDir(), "kapply")
	if err := os.WriteFile(path, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "version", "--client", "-o", "json").Output()
	if err != nil {
		t.Fatalf("kapply version -o json: %v", err)
	}
	var doc struct {
		ClientVersion map[string]string `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("kapply version -o json: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", s.root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	c := doc.ClientVersion
	want := map[string]string{
		"gitVersion": "v" + s.version, "gitCommit": strings.TrimSpace(string(head)),
		"platform": runtime.GOOS + "/" + runtime.GOARCH, "compiler": "gc",
		"major": strings.Split(s.version, ".")[0],
	}
	for key, value := range want {
		if c[key] != value {
			t.Errorf("clientVersion.%s = %q, want %q\n%s", key, c[key], value, out)
		}
	}
	if _, err := time.Parse(time.RFC3339, c["buildDate"]); err != nil {
		t.Errorf("clientVersion.buildDate %q: %v", c["buildDate"], err)
	}
	if c["gitTreeState"] != "clean" && c["gitTreeState"] != "dirty" {
		t.Errorf("clientVersion.gitTreeState %q", c["gitTreeState"])
	}
	text, err := exec.Command(path, "version", "--client").Output()
	if err != nil || string(text) != "Client Version: v"+s.version+"\n" {
		t.Errorf("kapply version --client: %v, %q", err, text)
	}
}
