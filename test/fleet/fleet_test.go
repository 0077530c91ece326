package fleet_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// thirty adds 30 contexts c00..c29 on the three servers in turn.
func thirty(t *testing.T, f *fleetConfig) []string {
	t.Helper()
	var names []string
	for i := range 30 {
		name := fmt.Sprintf("c%02d", i)
		f.add(t, name, i%3)
		names = append(names, name)
	}
	return names
}

// Apply, diff, status and delete across 30 contexts on three servers, the
// apply as a canary and waves: each wave starts after the previous one
// finished, as the start and finish lines' times show.
func TestFleetThirtyContextsInWaves(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	names := thirty(t, f)
	kubeconfig := f.write(t)
	file := configMaps(t, 5, "one")

	r := kapply(t, kubeconfig, "apply", "-f", file, "--contexts", "c*", "--canary", "2", "--wave-size", "10", "--max-parallel", "5", "--wait")
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	rows := matrix(t, r.stderr)
	for _, name := range names {
		if got := rows[name]; got.created != "5" || got.failed != "0" || got.ready != "yes" || got.firstError != "-" {
			t.Errorf("apply %s: row %+v, want 5 created, ready", name, got)
		}
		if n := f.countConfigMaps(t, name); n != 5 {
			t.Errorf("apply %s: %d ConfigMaps in its namespace, want 5", name, n)
		}
		if !strings.Contains(r.stdout, "["+name+"] configmap/cm-004 created\n") {
			t.Errorf("apply %s: no prefixed line", name)
		}
	}
	checkWaves(t, r.stderr, []int{2, 10, 10, 8}, 5)

	changed := configMaps(t, 5, "two")
	r = kapply(t, kubeconfig, "diff", "-f", changed, "--all-contexts", "--max-parallel", "30")
	if r.code != 1 {
		t.Fatalf("diff: exit %d, want 1 (differences)\n%s", r.code, r.stderr)
	}
	for _, name := range names {
		if !strings.Contains(r.stdout, "["+name+`] +  k: two`) {
			t.Errorf("diff %s: no prefixed change", name)
		}
	}
	r = kapply(t, kubeconfig, "status", "-f", file, "--contexts", "re:c[0-9]+", "--max-parallel", "30")
	if r.code != 0 || len(matrix(t, r.stderr)) != 30 {
		t.Fatalf("status: exit %d\n%s", r.code, r.stderr)
	}
	r = kapply(t, kubeconfig, "delete", "-f", file, "--all-contexts", "--max-parallel", "30")
	if r.code != 0 {
		t.Fatalf("delete: exit %d\n%s", r.code, r.stderr)
	}
	rows = matrix(t, r.stderr)
	for _, name := range names {
		if got := rows[name]; got.deleted != "5" {
			t.Errorf("delete %s: row %+v, want 5 deleted", name, got)
		}
		if n := f.countConfigMaps(t, name); n != 0 {
			t.Errorf("delete %s: %d ConfigMaps left", name, n)
		}
	}
}

var eventLine = regexp.MustCompile(`(?m)^\[(\S+)\] (started|finished|failed) \(wave (\d+), (\S+?)[,)]`)

// checkWaves reads the start and finish lines: wave k holds sizes[k]
// clusters, each starts after every cluster of wave k-1 finished, and no
// more than maxParallel run at once.
func checkWaves(t *testing.T, stderr string, sizes []int, maxParallel int) {
	t.Helper()
	type span struct{ start, end time.Time }
	waves := map[int]map[string]*span{}
	running, peak := 0, 0
	for _, m := range eventLine.FindAllStringSubmatch(stderr, -1) {
		var wave int
		fmt.Sscan(m[3], &wave)
		at, err := time.Parse("2006-01-02T15:04:05.000Z07:00", m[4])
		if err != nil {
			t.Fatal(err)
		}
		if waves[wave] == nil {
			waves[wave] = map[string]*span{}
		}
		if m[2] == "started" {
			waves[wave][m[1]] = &span{start: at}
			running++
			peak = max(peak, running)
			continue
		}
		waves[wave][m[1]].end = at
		running--
	}
	if peak > maxParallel {
		t.Errorf("%d clusters ran at once, want at most %d", peak, maxParallel)
	}
	for k, size := range sizes {
		if len(waves[k]) != size {
			t.Fatalf("wave %d has %d clusters, want %d:\n%s", k, len(waves[k]), size, stderr)
		}
		if k == 0 {
			continue
		}
		for name, s := range waves[k] {
			for prev, p := range waves[k-1] {
				if s.start.Before(p.end) {
					t.Errorf("%s (wave %d) started at %s, before %s (wave %d) finished at %s", name, k, s.start, prev, k-1, p.end)
				}
			}
		}
	}
}

// One context refuses connections, one hangs past --cluster-timeout, one
// is denied by RBAC: every other cluster completes, the matrix names each
// failure, the exit code is 1, and the hung server does not hold the run.
func TestFleetFailuresStayInTheirCluster(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	var good []string
	for i := range 9 {
		name := fmt.Sprintf("good%d", i)
		f.add(t, name, i%3)
		good = append(good, name)
	}
	f.addURL("refused", "https://"+closedPort(t))
	f.addURL("hung", "https://"+silentServer(t))
	deniedNS := servers[1].Namespace(t)
	readOnly := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}
	f.merge(t, "denied", servers[1].UserKubeconfig(t, deniedNS, "fleet-reader", readOnly))
	f.cfg.Contexts["denied"].Namespace = deniedNS
	kubeconfig := f.write(t)
	file := configMaps(t, 3, "one")

	r := kapply(t, kubeconfig, "apply", "-f", file, "--contexts", "good*,refused,hung,denied", "--max-parallel", "12", "--cluster-timeout", "10s")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if r.took > 2*time.Minute {
		t.Errorf("the run took %s: the hung server held it", r.took)
	}
	rows := matrix(t, r.stderr)
	for _, name := range good {
		if got := rows[name]; got.created != "3" || got.failed != "0" || got.firstError != "-" {
			t.Errorf("%s: row %+v, want 3 created", name, got)
		}
	}
	// A hung server fails by the deadline, or by client-go's 10 s TLS handshake
	// timeout when that fires first: both name the hung server.
	for name, want := range map[string]string{"refused": "refused", "hung": "(timed out after 10s|TLS handshake timeout)", "denied": "forbidden"} {
		if got := rows[name]; !regexp.MustCompile(want).MatchString(got.firstError) {
			t.Errorf("%s: first error %q, want it to say %q", name, got.firstError, want)
		}
		if !regexp.MustCompile(`(?m)^\[` + name + `\] failed \(`).MatchString(r.stderr) {
			t.Errorf("%s: not reported failed", name)
		}
	}
	if got := rows["denied"]; got.failed != "3" {
		t.Errorf("denied: %s objects failed, want 3", got.failed)
	}
	if !strings.Contains(r.stderr, "3 of 12 cluster(s) failed") {
		t.Errorf("no count of failed clusters:\n%s", r.stderr)
	}
}

// The third server is killed while its contexts apply: theirs fail (and
// say so: nothing half-applied is reported done), the others complete.
func TestFleetServerKilledMidRun(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	var names []string
	for i := range 6 {
		name := fmt.Sprintf("k%d", i)
		f.add(t, name, i%3)
		names = append(names, name)
	}
	kubeconfig := f.write(t)
	file := configMaps(t, 300, "one")

	cmd := kapplyCommand(t, kubeconfig, "apply", "-f", file, "--contexts", "k*", "--max-parallel", "6", "--parallel", "2")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut, out bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill server 2 at the first object its contexts (k2, k5) applied.
	lines := bufio.NewScanner(stdout)
	var restart func(context.Context) error
	t.Cleanup(func() {
		if restart != nil {
			if err := restart(context.Background()); err != nil {
				t.Errorf("starting server 2 again: %v", err)
			}
		}
	})
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if restart == nil && (strings.HasPrefix(lines.Text(), "[k2] ") || strings.HasPrefix(lines.Text(), "[k5] ")) {
			up, err := servers[2].Down(false)
			if err != nil {
				t.Fatal(err)
			}
			restart = up
		}
	}
	killed := restart != nil
	if _, err := io.Copy(&out, stdout); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("server 2's contexts printed nothing (%v):\n%s", err, errOut.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut.String())
	}
	rows := matrix(t, errOut.String())
	for i, name := range names {
		got := rows[name]
		if i%3 != 2 {
			if got.created != "300" || got.failed != "0" {
				t.Errorf("%s (server %d): row %+v, want 300 created", name, i%3, got)
			}
			continue
		}
		if got.failed == "0" || got.firstError == "-" {
			t.Errorf("%s on the killed server: row %+v, want failures named", name, got)
		}
		if !regexp.MustCompile(`(?m)^\[` + name + `\] failed \(`).MatchString(errOut.String()) {
			t.Errorf("%s: not reported failed", name)
		}
	}
	// Nothing half-applied is reported done: server 2 up again, each
	// object its contexts reported created exists, and the matrix counts
	// exactly the lines that said so.
	if err := restart(context.Background()); err != nil {
		t.Fatalf("starting server 2 again: %v", err)
	}
	restart = nil
	for _, name := range []string{"k2", "k5"} {
		created, err := strconv.Atoi(rows[name].created)
		if err != nil {
			t.Fatalf("%s: created %q", name, rows[name].created)
		}
		if said := len(regexp.MustCompile(`(?m)^\[`+name+`\] configmap/\S+ created$`).FindAllString(out.String(), -1)); said != created {
			t.Errorf("%s: the matrix counts %d created, %d lines said so", name, created, said)
		}
		if n := f.countConfigMaps(t, name); n < created {
			t.Errorf("%s: reported %d created, %d exist", name, created, n)
		}
	}
}
