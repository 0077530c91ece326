package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestDeleteByTypeAndName: kubectl delete's argument forms — TYPE NAME...,
// TYPE/NAME..., TYPE -l SELECTOR — with -n, kubectl's lines and errors: a
// missing object (NotFound, exit 1; --ignore-not-found exit 0), a type
// without a name, a selector matching nothing, arguments beside -f.
func TestDeleteByTypeAndName(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": configMapFile("a", "k: v"), "b.yaml": configMapFile("b", "k: v"), "e.yaml": configMapFile("e", "k: v"),
		"c.yaml": labelledConfigMap("c", "app: x", "k: v"), "d.yaml": labelledConfigMap("d", "app: x", "k: v"),
	})
	mustRun(t, "apply", "-f", dir, "-n", ns)
	for _, c := range []struct {
		args        []string
		code        int
		stdout      string
		stderr      string
		liveAfter   string
		kubectlSame bool
	}{
		{args: []string{"configmap", "a"}, stdout: fmt.Sprintf("configmap %q deleted from %s namespace\n", "a", ns), liveAfter: "b,c,d,e"},
		{args: []string{"configmap/b", "configmaps/missing"}, code: exitFailed, stdout: fmt.Sprintf("configmap %q deleted from %s namespace\n", "b", ns),
			stderr: `Error from server (NotFound): configmaps "missing" not found`, liveAfter: "c,d,e", kubectlSame: true},
		{args: []string{"configmap", "missing", "--ignore-not-found"}, liveAfter: "c,d,e", kubectlSame: true},
		{args: []string{"configmaps", "-l", "app=none"}, stdout: "No resources found\n", liveAfter: "c,d,e", kubectlSame: true},
		{args: []string{"configmaps", "-l", "app=x", "-o", "name"}, stdout: "configmap/c\nconfigmap/d\n", liveAfter: "e"},
		{args: []string{"configmap"}, code: exitFailed, stderr: "resource(s) were provided, but no name was specified", liveAfter: "e", kubectlSame: true},
		{args: []string{"configmap", "e", "-f", dir}, code: exitFailed, stderr: "error: when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well", liveAfter: "e", kubectlSame: true},
		{args: []string{"configmap", "e", "--dry-run=server"}, stdout: fmt.Sprintf("configmap %q deleted from %s namespace (server dry run)\n", "e", ns), liveAfter: "e"},
	} {
		what := strings.Join(c.args, " ")
		if c.kubectlSame && testcluster.HaveKubectl(t) {
			// kubectl on the same arguments (its server dry run: nothing goes).
			cmd := exec.Command("kubectl", append([]string{"delete", "-n", ns, "--dry-run=server", "--kubeconfig", cluster.Kubeconfig}, c.args...)...)
			var kout, kerr strings.Builder
			cmd.Stdout, cmd.Stderr = &kout, &kerr
			err := cmd.Run()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			}
			if code != c.code || !strings.Contains(kerr.String(), c.stderr) || !strings.Contains(kout.String(), strings.TrimSuffix(c.stdout, "from "+ns+" namespace\n")) {
				t.Errorf("kubectl delete %s: exit %d\n%s\n%s\nkapply's: %q", what, code, kout.String(), kerr.String(), c.stderr)
			}
		}
		r := kapply(t, append([]string{"delete", "-n", ns}, c.args...)...)
		lines := strings.Split(r.stdout, "\n")
		slices.Sort(lines)
		want := strings.Split(c.stdout, "\n")
		slices.Sort(want)
		if r.code != c.code || !slices.Equal(lines, want) || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("delete %s: exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant: %s", what, r.code, c.code, r.stdout, c.stdout, r.stderr, c.stderr)
		}
		if live := strings.Join(liveConfigMaps(t, ns), ","); live != c.liveAfter {
			t.Errorf("delete %s: live %s, want %s", what, live, c.liveAfter)
		}
	}
}

// TestStatusAndReleaseByTypeAndName: status and release take objects on
// the server by TYPE/NAME or TYPE NAME, their last-applied record standing
// for the file: drift another writer made is shown (exit 1), release hands
// the field over with no warning about a file, and status is then in step.
func TestStatusAndReleaseByTypeAndName(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"web.yaml": ownedDeployment("web", "2")}), "-n", ns)
	if r := kapply(t, "status", "deployment/web", "-n", ns); r.code != 0 {
		t.Fatalf("status after apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	_, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "autoscaler"})
	if err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "status", "deployment", "web", "-n", ns, "-o", "json")
	var statuses []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &statuses); err != nil || r.code != exitDrift || len(statuses) != 1 ||
		!strings.Contains(r.stdout, "spec.replicas") || !strings.Contains(r.stdout, "autoscaler") {
		t.Fatalf("status after scaling: exit %d, %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	r = mustRun(t, "release", "deployment/web", "-n", ns, "--field", "spec.replicas")
	if !strings.Contains(r.stdout, "released spec.replicas") || strings.Contains(r.stderr, "Warning") {
		t.Errorf("release: %s\n%s", r.stdout, r.stderr)
	}
	if view := mustRun(t, "last-applied", "view", "deployment/web", "-n", ns); strings.Contains(view.stdout, "replicas") {
		t.Errorf("the record still holds replicas:\n%s", view.stdout)
	}
	if r := kapply(t, "status", "deployment/web", "-n", ns); r.code != 0 {
		t.Errorf("status after release: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"status", "deployment/web", "-f", "x.yaml"}, {"release", "deployment/web", "-f", "x.yaml", "--field", "spec.replicas"}} {
		if r := kapply(t, append(args, "-n", ns)...); r.code != exitError || !strings.Contains(r.stderr, "you may not specify resource arguments as well") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	// A Secret named on the server: its drift shown, its values never.
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: first-hunter2}\n"}), "-n", ns)
	_, err = dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).Patch(t.Context(), "s", types.MergePatchType,
		[]byte(`{"data":{"password":"`+b64("second-hunter2")+`"}}`), metav1.PatchOptions{FieldManager: "rotator"})
	if err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"", "json"} {
		r := kapply(t, "status", "secret", "s", "-n", ns, "-o", output)
		assertAbsent(t, "status secret s -o "+output, r.stdout+r.stderr, []string{"hunter2", b64("first-hunter2"), b64("second-hunter2")})
		if r.code != exitDrift || !strings.Contains(r.stdout, "password") {
			t.Errorf("status secret s -o %s: exit %d\n%s\n%s", output, r.code, r.stdout, r.stderr)
		}
	}
	if r := kapply(t, "status", "deployment/missing", "-n", ns); r.code != exitError || !strings.Contains(r.stderr, `deployments.apps "missing" not found`) {
		t.Errorf("status of a missing object: exit %d\n%s", r.code, r.stderr)
	}
}

// TestCompletionOfDeleteStatusRelease: delete, status and release
// complete kinds, then the names of that kind in the namespace, as export.
func TestCompletionOfDeleteStatusRelease(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"a.yaml": configMapFile("alpha", "k: v"), "b.yaml": configMapFile("beta", "k: v")}), "-n", ns)
	for _, command := range []string{"delete", "status", "release"} {
		kinds, _ := completeOn(t, cluster.Kubeconfig, command, "-n", ns, "config")
		if !slices.Contains(kinds, "configmaps") {
			t.Errorf("%s config<TAB>: %v", command, kinds)
		}
		names, directive := completeOn(t, cluster.Kubeconfig, command, "-n", ns, "configmap", "al")
		if !slices.Equal(names, []string{"alpha"}) || directive != ":4" {
			t.Errorf("%s configmap al<TAB>: %v %s", command, names, directive)
		}
		names, _ = completeOn(t, cluster.Kubeconfig, command, "-n", ns, "configmap", "alpha", "")
		if slices.Contains(names, "alpha") || !slices.Contains(names, "beta") {
			t.Errorf("%s configmap alpha <TAB>: %v", command, names)
		}
		slashed, _ := completeOn(t, cluster.Kubeconfig, command, "-n", ns, "configmaps/b")
		if !slices.Equal(slashed, []string{"configmaps/beta"}) {
			t.Errorf("%s configmaps/b<TAB>: %v", command, slashed)
		}
	}
}

// TestVersionFailsWhenServerUnreachable: as kubectl, version prints the
// client version, then the server's error, and exits 1 (with -o json too).
func TestVersionFailsWhenServerUnreachable(t *testing.T) {
	server := refusedServer(t)
	refused := fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?\n", strings.TrimPrefix(server, "http://"))
	r := runAlone(t, "kapply", server, "version")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "Client Version: ") || strings.Contains(r.stdout, "Server") || r.stderr != refused {
		t.Errorf("version: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAlone(t, "kapply", server, "version", "-o", "json")
	var doc versionInfo
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || doc.ClientVersion == nil || doc.ServerVersion != nil || r.stderr != refused {
		t.Errorf("version -o json: exit %d, %v\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	if !testcluster.HaveKubectl(t) {
		return
	}
	if k := runAlone(t, "kubectl", server, "version"); k.code != 1 || k.stderr != refused || !strings.HasPrefix(k.stdout, "Client Version: ") {
		t.Errorf("kubectl version: exit %d\n%s\n%s", k.code, k.stdout, k.stderr)
	}
}
