package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// fleetKubeconfig writes a kubeconfig holding, for each name, a context on
// the test cluster with its own new namespace; it returns its path and the
// namespaces by context.
func fleetKubeconfig(t *testing.T, names ...string) (string, map[string]string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	base := cfg.Contexts[cfg.CurrentContext]
	namespaces := map[string]string{}
	for _, name := range names {
		ctx := base.DeepCopy()
		ctx.Namespace = cluster.Namespace(t)
		cfg.Contexts[name] = ctx
		namespaces[name] = ctx.Namespace
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, namespaces
}

// kapplyKubeconfig runs the CLI in-process with kubeconfig.
func kapplyKubeconfig(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
	args = append(args, "--kubeconfig", kubeconfig)
	code := exitCode(run(args, streams), &errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

const fleetConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: fleet
data:
  k: v1
`

// apply, diff, status and delete with --contexts run in each picked
// context, in its own namespace (from the context, as -n would be), with
// each line prefixed by the context, and a matrix at the end.
func TestFleetContextsApplyDiffStatusDelete(t *testing.T) {
	kubeconfig, namespaces := fleetKubeconfig(t, "prod-eu", "prod-us", "staging", "dev")
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	file := filepath.Join(dir, "cm.yaml")

	r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", file, "--contexts", "prod-*,re:stag.*", "--max-parallel", "2")
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, ctx := range []string{"prod-eu", "prod-us", "staging"} {
		if !strings.Contains(r.stdout, "["+ctx+"] configmap/fleet created\n") {
			t.Errorf("apply: no prefixed line for %s:\n%s", ctx, r.stdout)
		}
		if !regexp.MustCompile(`(?m)^` + ctx + `\s+0\s+1\s+0\s+0\s+0\s+0\s+0\s+-\s+\S+\s+-$`).MatchString(r.stderr) {
			t.Errorf("apply: no matrix row for %s (1 created):\n%s", ctx, r.stderr)
		}
	}
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for ctx, ns := range namespaces {
		_, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "fleet", metav1.GetOptions{})
		if applied := err == nil; applied != (ctx != "dev") {
			t.Errorf("context %s: applied = %v (%v)", ctx, applied, err)
		}
	}

	changed := writeFiles(t, map[string]string{"cm.yaml": strings.Replace(fleetConfigMap, "k: v1", "k: v2", 1)})
	r = kapplyKubeconfig(t, kubeconfig, "diff", "-f", filepath.Join(changed, "cm.yaml"), "--all-contexts")
	if r.code != 1 {
		t.Fatalf("diff: exit %d, want 1 (differences)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "[dev] +  name: fleet") && !strings.Contains(r.stdout, "[dev] ") {
		t.Errorf("diff: no prefixed diff for dev:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "[prod-eu] +  k: v2") {
		t.Errorf("diff: no prefixed change for prod-eu:\n%s", r.stdout)
	}

	r = kapplyKubeconfig(t, kubeconfig, "status", "-f", file, "--contexts", "prod-eu,staging")
	if r.code != 0 || !strings.Contains(r.stdout, "[prod-eu] ") || strings.Contains(r.stdout, "[dev]") {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = kapplyKubeconfig(t, kubeconfig, "delete", "-f", file, "--contexts", "prod-*")
	if r.code != 0 || !strings.Contains(r.stdout, "[prod-us] configmap \"fleet\" deleted") {
		t.Fatalf("delete: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^prod-us\s+0\s+0\s+0\s+0\s+0\s+1\s+0\s`).MatchString(r.stderr) {
		t.Errorf("delete: no matrix row with 1 deleted:\n%s", r.stderr)
	}
}

// A failed cluster fails the run (exit 1) and names itself in the matrix;
// the others complete.
func TestFleetContextsFailedClusterIsNamed(t *testing.T) {
	kubeconfig, _ := fleetKubeconfig(t, "good", "bad")
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	bad := cfg.Contexts["bad"]
	cfg.Clusters["closed"] = cfg.Clusters[bad.Cluster].DeepCopy()
	cfg.Clusters["closed"].Server = "https://127.0.0.1:1"
	bad.Cluster = "closed"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", filepath.Join(dir, "cm.yaml"), "--contexts", "good,bad")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "[good] configmap/fleet created") {
		t.Errorf("good cluster not applied:\n%s", r.stdout)
	}
	if !regexp.MustCompile(`(?m)^bad\s+0\s.*refused`).MatchString(r.stderr) || !strings.Contains(r.stderr, "1 of 2 cluster(s) failed") {
		t.Errorf("matrix does not name the refused cluster:\n%s", r.stderr)
	}
}

func TestFleetContextsFlagErrors(t *testing.T) {
	kubeconfig, _ := fleetKubeconfig(t, "one")
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	file := filepath.Join(dir, "cm.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--contexts", "one", "--context", "one"}, "cannot be used with --context"},
		{[]string{"--contexts", "nope-*"}, `no context matches "nope-*"`},
		{[]string{"--cluster-selector", "region=eu"}, "--cluster-selector needs --contexts, --all-contexts, --clusters-file"},
		{[]string{"--all-contexts", "--cluster-selector", "region=eu"}, "--cluster-selector needs --clusters-file"},
		{[]string{"--canary", "1"}, "--canary needs --contexts"},
		{[]string{"--all-contexts", "--yes"}, "--yes needs --confirm"},
		{[]string{"--all-contexts", "--confirm", "--dry-run=server"}, "--dry-run cannot be used with --confirm"},
		{[]string{"--all-contexts", "--max-parallel", "0"}, "--max-parallel must be at least 1"},
	} {
		r := kapplyKubeconfig(t, kubeconfig, append([]string{"apply", "-f", file}, tc.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, want 1 and %q:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
}

// --clusters-file with --cluster-selector picks clusters by their labels.
func TestFleetContextsClustersFileSelector(t *testing.T) {
	kubeconfig, namespaces := fleetKubeconfig(t, "eu-1", "eu-2", "us-1")
	clusters := writeFiles(t, map[string]string{"clusters.yaml": `clusters:
- context: eu-1
  labels: {region: eu}
- context: us-1
  labels: {region: us}
- context: eu-2
  labels: {region: eu}
`})
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", filepath.Join(dir, "cm.yaml"),
		"--clusters-file", filepath.Join(clusters, "clusters.yaml"), "--cluster-selector", "region=eu")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for ctx, ns := range namespaces {
		_, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "fleet", metav1.GetOptions{})
		if applied := err == nil; applied != strings.HasPrefix(ctx, "eu-") {
			t.Errorf("context %s: applied = %v (%v)", ctx, applied, err)
		}
	}
}

// Clusters writing at once never interleave within a line, and each line
// carries its context.
func TestFleetPrefixedLinesAreWhole(t *testing.T) {
	var out bytes.Buffer
	dst := &lockedWriter{w: &out}
	var wg sync.WaitGroup
	for c := range 8 {
		w := &prefixedLines{dst: dst, prefix: fmt.Sprintf("[c%d] ", c)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(w, "line %d of ", i)
				fmt.Fprintf(w, "c%d\n", c)
			}
			fmt.Fprint(w, "partial")
			if err := w.close(); err != nil {
				t.Error(err)
			}
			fmt.Fprintln(w, "after close")
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*201 {
		t.Fatalf("%d lines, want %d", len(lines), 8*201)
	}
	whole := regexp.MustCompile(`^\[c(\d)\] (line \d+ of c(\d)|partial)$`)
	for _, line := range lines {
		m := whole.FindStringSubmatch(line)
		if m == nil || (m[3] != "" && m[1] != m[3]) {
			t.Fatalf("line not whole or not its cluster's: %q", line)
		}
	}
	if strings.Contains(out.String(), "after close") {
		t.Error("a line written after close was printed")
	}
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Fatal(err)
	}
}

// status over several contexts says, for each object, which clusters
// stand alike: in step, changed by someone else (and how), or missing.
func TestFleetContextsStatusAcrossClusters(t *testing.T) {
	kubeconfig, namespaces := fleetKubeconfig(t, "ok", "edited", "empty")
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	file := filepath.Join(dir, "cm.yaml")
	if r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", file, "--contexts", "ok,edited"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	cms := client.CoreV1().ConfigMaps(namespaces["edited"])
	cm, err := cms.Get(context.Background(), "fleet", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "by-hand"
	if _, err := cms.Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := kapplyKubeconfig(t, kubeconfig, "status", "-f", file, "--contexts", "ok,edited,empty")
	if r.code != 1 {
		t.Fatalf("status: exit %d, want 1 (drift)\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, across, ok := strings.Cut(r.stdout, "Across clusters:\n")
	want := []string{
		"configmap/fleet (from " + file + "): 3 state(s) across 3 cluster(s)",
		`  changed since the last apply: data.k: live "by-hand", last applied "v1": edited`,
		"  in step with the last apply: ok",
		"  not on the server: empty",
	}
	if !ok || strings.TrimSpace(across) != strings.Join(want, "\n") {
		t.Errorf("states across clusters:\n%s\nwant:\n%s", across, strings.Join(want, "\n"))
	}
	r = kapplyKubeconfig(t, kubeconfig, "status", "-f", file, "--contexts", "ok")
	if strings.Contains(r.stdout, "Across clusters") {
		t.Errorf("one cluster, yet a comparison:\n%s", r.stdout)
	}

	// -o json: a JSON line per context, the comparison on stderr.
	r = kapplyKubeconfig(t, kubeconfig, "status", "-f", file, "--contexts", "ok,edited,empty", "-o", "json")
	if r.code != 1 || !strings.Contains(r.stderr, "Across clusters:\n") {
		t.Fatalf("status -o json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var doc struct {
			Context string           `json:"context"`
			Objects []map[string]any `json:"objects"`
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil || len(doc.Objects) != 1 {
			t.Fatalf("not a line of one context's statuses (%v): %q", err, line)
		}
		seen[doc.Context] = line
	}
	if len(seen) != 3 || !strings.Contains(seen["edited"], "by-hand") || strings.Contains(seen["ok"], "by-hand") {
		t.Errorf("status -o json lines by context: %v", seen)
	}
}
