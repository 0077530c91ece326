package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOwnershipCommandsRefusedServer: the ownership commands answer a
// refused server with kubectl's sentence at once: exit 1 as kubectl apply
// view-last-applied, except status, whose 1 means drift (2, as diff). So
// they do with an empty discovery cache, where discovery is the first
// request, and with a warm one (a cluster stopped since the last command,
// kubectl's cache kept for six hours), where the first request is an
// object's read, which the retry rule would otherwise retry for its whole
// window.
func TestOwnershipCommandsRefusedServer(t *testing.T) {
	server := refusedServer(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	file := dir + "/cm.yaml"
	want := fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", strings.TrimPrefix(server, "http://"))
	caches := map[string]string{"empty cache": t.TempDir(), "warm cache": warmDiscoveryCache(t, file, server)}
	for name, cacheDir := range caches {
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{"adopt", "-f", file}, 1},
			{[]string{"release", "-f", file, "--field", "data.a"}, 1},
			{[]string{"last-applied", "view", "-f", file}, 1},
			{[]string{"last-applied", "set", "-f", file}, 1},
			{[]string{"migrate", "-f", file, "--to", "server-side"}, 1},
			{[]string{"export", "configmap/cm"}, 1},
			{[]string{"status", "-f", file}, 2},
		} {
			start := time.Now()
			r := runAlone(t, "kapply", server, append(c.args, "--cache-dir", cacheDir)...)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s: %v took %s", name, c.args, took)
			}
			if r.code != c.code || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "error: ") {
				t.Errorf("%s: %v: exit %d, stderr %q; want exit %d and kubectl's sentence", name, c.args, r.code, r.stderr, c.code)
			}
		}
	}
}

// warmDiscoveryCache is a --cache-dir holding the test cluster's discovery
// as kubectl keeps it, under server's host and port: what a user has for a
// cluster that was reached and has stopped since.
func warmDiscoveryCache(t *testing.T, file, server string) string {
	t.Helper()
	cacheDir := t.TempDir()
	kapply(t, "status", "-f", file, "--cache-dir", cacheDir)
	discovery := filepath.Join(cacheDir, "discovery")
	entries, err := os.ReadDir(discovery)
	if err != nil || len(entries) != 1 {
		t.Fatalf("discovery cache of the test cluster: %v, %d entries", err, len(entries))
	}
	refused := strings.ReplaceAll(strings.TrimPrefix(server, "http://"), ":", "_")
	if err := os.Rename(filepath.Join(discovery, entries[0].Name()), filepath.Join(discovery, refused)); err != nil {
		t.Fatal(err)
	}
	return cacheDir
}
