package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapply/kapply/internal/testcluster"
)

// kubercServerSide is a kubectl preferences file that makes apply
// server-side, sets a flag of kubectl apply kapply lacks (a warning in
// kapply), sets defaults for a subcommand and a command kapply lacks
// (neither applies to kapply, nor warns), gives kapply's own export a
// default, and names an alias that applies server-side with its own field
// manager.
const kubercServerSide = `apiVersion: kubectl.config.k8s.io/v1beta1
kind: Preference
defaults:
- command: apply
  options:
  - name: server-side
    default: "true"
  - name: show-managed-fields
    default: "true"
- command: apply view-last-applied
  options:
  - name: output
    default: json
- command: export
  options:
  - name: output
    default: kyaml
- command: get
  options:
  - name: output
    default: wide
aliases:
- name: ssa
  command: apply
  options:
  - name: server-side
    default: "true"
  appendArgs: [--field-manager, from-alias]
`

// kapplyArgs runs the CLI in-process with exactly args: no --kubeconfig
// added.
func kapplyArgs(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
	code := exitCode(run(args, streams), &errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// TestKubercDefaultsAndAliases: kubectl's preferences file makes apply
// server-side (managedFields: manager "kubectl", operation Apply) whether
// named by --kuberc or $KUBERC; a flag on the command line wins over the
// default; KUBERC=off and KUBECTL_KUBERC=false turn it off; a default for
// a flag kapply lacks is a warning; the defaults of kubectl's apply
// view-last-applied (-o json) do not reach kapply's apply, and one for get
// is skipped without a warning; kapply's own commands take defaults; an alias runs its command with its
// options and arguments; a --kuberc that does not exist fails the run.
func TestKubercDefaultsAndAliases(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	rc := filepath.Join(writeFiles(t, map[string]string{"kuberc": kubercServerSide}), "kuberc")
	apply := func(name string, extra ...string) result {
		t.Helper()
		dir := writeFiles(t, map[string]string{name + ".yaml": labelledConfigMap(name, "app: x", "k: v")})
		return kapply(t, append([]string{"apply", "-f", dir, "-n", ns}, extra...)...)
	}
	warning := `Warning: kuberc default of "apply" sets --show-managed-fields, which "kapply apply" of kapply does not have; ignoring it`

	r := apply("flag", "--kuberc", rc)
	if r.code != 0 || r.stdout != "configmap/flag serverside-applied\n" || !strings.Contains(r.stderr, warning) || strings.Contains(r.stderr, `"get"`) {
		t.Fatalf("apply --kuberc: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := managers(t, ns, "flag"); !slices.Contains(got, "kubectl/Apply") {
		t.Errorf("apply --kuberc: managers %v, want kubectl/Apply", got)
	}

	if r := kapply(t, "export", "configmap/flag", "-n", ns, "--kuberc", rc); r.code != 0 || !strings.HasPrefix(r.stdout, "---\n{\n") {
		t.Errorf("export with kuberc's default -o kyaml: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("KUBERC", rc)
	if r := apply("env"); r.code != 0 || !slices.Contains(managers(t, ns, "env"), "kubectl/Apply") {
		t.Errorf("KUBERC=file: exit %d, managers %v\n%s", r.code, managers(t, ns, "env"), r.stderr)
	}
	if r := apply("cli", "--server-side=false"); r.code != 0 || !slices.Equal(managers(t, ns, "cli"), []string{"kubectl-client-side-apply/Update"}) {
		t.Errorf("--server-side=false over the default: exit %d, managers %v\n%s", r.code, managers(t, ns, "cli"), r.stderr)
	}
	if r := apply("cli2", "--show-managed-fields=true"); r.code == 0 || !strings.Contains(r.stderr, "kapply has no such flag") {
		t.Errorf("a flag kapply lacks on the command line: exit %d, want refused\n%s", r.code, r.stderr)
	}
	dir := writeFiles(t, map[string]string{"alias.yaml": labelledConfigMap("alias", "app: x", "k: v")})
	if r := kapply(t, "ssa", "-f", dir, "-n", ns); r.code != 0 || r.stdout != "configmap/alias serverside-applied\n" || !slices.Contains(managers(t, ns, "alias"), "from-alias/Apply") {
		t.Errorf("alias ssa: exit %d, managers %v\n%s\n%s", r.code, managers(t, ns, "alias"), r.stdout, r.stderr)
	}

	t.Setenv("KUBERC", "off")
	if r := apply("disabled"); r.code != 0 || !slices.Equal(managers(t, ns, "disabled"), []string{"kubectl-client-side-apply/Update"}) {
		t.Errorf("KUBERC=off: exit %d, managers %v\n%s", r.code, managers(t, ns, "disabled"), r.stderr)
	}
	t.Setenv("KUBERC", rc)
	t.Setenv("KUBECTL_KUBERC", "false")
	if r := apply("gate"); r.code != 0 || !slices.Equal(managers(t, ns, "gate"), []string{"kubectl-client-side-apply/Update"}) {
		t.Errorf("KUBECTL_KUBERC=false: exit %d, managers %v\n%s", r.code, managers(t, ns, "gate"), r.stderr)
	}
	t.Setenv("KUBECTL_KUBERC", "")
	missing := filepath.Join(t.TempDir(), "none")
	// kubectl's words, without "error: ", and its exit code 1.
	if r := apply("missing", "--kuberc", missing); r.code != 1 || !strings.HasPrefix(r.stderr, "error occurred while applying preferences kuberc error kuberc: open "+missing) {
		t.Errorf("--kuberc of a missing file: exit %d\n%s", r.code, r.stderr)
	}
}

// TestKubercCredentialPluginPolicy: a kuberc whose credentialPluginPolicy
// is DenyAll, or whose allowlist leaves the kubeconfig's exec plugin out,
// keeps kapply from running the plugin, with client-go's (kubectl's)
// message; without the kuberc, or with the plugin in the allowlist, it
// runs.
func TestKubercCredentialPluginPolicy(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := t.TempDir()
	marker := filepath.Join(dir, "plugin-ran")
	plugin := filepath.Join(dir, "credential-plugin")
	script := "#!/bin/sh\ntouch " + marker + "\n" +
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"not-a-real-token"}}'` + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := execKubeconfig(t, plugin)
	manifests := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: x", "k: v")})
	writeRC := func(policy string) string {
		path := filepath.Join(t.TempDir(), "kuberc")
		if err := os.WriteFile(path, []byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n"+policy), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(rc string) (result, bool) {
		t.Helper()
		os.Remove(marker)
		r := kapplyArgs(t, "apply", "-f", manifests, "-n", "default", "--dry-run=server", "--kubeconfig", kubeconfig, "--kuberc", rc)
		_, err := os.Stat(marker)
		return r, err == nil
	}

	denyAll := writeRC("credentialPluginPolicy: DenyAll\n")
	if r, ran := run(denyAll); ran || r.code == 0 || !strings.Contains(r.stderr, `plugin "`+plugin+`" not allowed: policy set to "DenyAll"`) {
		t.Errorf("DenyAll: plugin ran %v, exit %d\n%s", ran, r.code, r.stderr)
	}
	other := writeRC("credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: /usr/bin/true\n")
	if r, ran := run(other); ran || r.code == 0 || !strings.Contains(r.stderr, `plugin path "`+plugin+`" is not permitted by the credential plugin allowlist`) {
		t.Errorf("allowlist without the plugin: plugin ran %v, exit %d\n%s", ran, r.code, r.stderr)
	}
	allowed := writeRC("credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: " + plugin + "\n")
	if _, ran := run(allowed); !ran {
		t.Errorf("allowlist with the plugin: the plugin did not run")
	}
	if _, ran := run(writeRC("")); !ran {
		t.Errorf("no policy: the plugin did not run (the control)")
	}
}

// execKubeconfig is the test cluster's kubeconfig with its user's
// credentials replaced by the exec credential plugin at plugin.
func execKubeconfig(t *testing.T, plugin string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for name := range cfg.AuthInfos {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			Command:         plugin,
			APIVersion:      "client.authentication.k8s.io/v1",
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubercApplyDefaultsReachPlanNotApplyPlan: kubectl's documented
// kuberc example (apply --server-side=true) made every apply --plan fail
// ("--server-side cannot be used with --plan"), and kapply plan ignored
// it. kuberc's apply defaults now reach plan, and apply --plan takes what
// the plan fixed from the plan, not from kuberc: a plan made with the
// default runs server-side, one made with --server-side=false runs
// client-side, both under the same kuberc; a --server-side typed on the
// command line is still refused.
func TestKubercApplyDefaultsReachPlanNotApplyPlan(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	rc := filepath.Join(writeFiles(t, map[string]string{"kuberc": kubercServerSide}), "kuberc")
	for _, c := range []struct {
		name     string
		planArgs []string
		manager  string
	}{
		{"fromkuberc", nil, "kubectl/Apply"},
		{"clientside", []string{"--server-side=false"}, "kubectl-client-side-apply/Update"},
	} {
		dir := writeFiles(t, map[string]string{c.name + ".yaml": labelledConfigMap(c.name, "app: x", "k: v")})
		planFile := filepath.Join(t.TempDir(), "plan.json")
		r := kapply(t, append([]string{"plan", "-f", dir, "-n", ns, "-o", planFile, "--kuberc", rc}, c.planArgs...)...)
		if r.code != 0 {
			t.Fatalf("%s: plan: exit %d\n%s", c.name, r.code, r.stderr)
		}
		r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "--kuberc", rc)
		if r.code != 0 {
			t.Fatalf("%s: apply --plan under kuberc's --server-side=true: exit %d\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
		if got := managers(t, ns, c.name); !slices.Equal(got, []string{c.manager}) {
			t.Errorf("%s: managers %v, want %s (as the plan was made)", c.name, got, c.manager)
		}
		if r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "--kuberc", rc, "--server-side"); r.code == 0 || !strings.Contains(r.stderr, "--server-side cannot be used with --plan") {
			t.Errorf("%s: --server-side typed with --plan: exit %d, want refused\n%s", c.name, r.code, r.stderr)
		}
	}
}
