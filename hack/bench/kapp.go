package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// kappTool runs Carvel kapp (bin/kapp, `make kapp-bin`) as a peer: every
// phase is a `kapp deploy` of the tool's tree as one app, whose name is the
// tree's, so that each run is a new app. Its diff is a deploy with
// --diff-run --diff-changes: the changes kapp would make, shown, none made.
type kappTool struct {
	bin        string
	version    string
	kubeconfig string
	parallel   int
}

// newKapp checks the binary; the error wraps exec.ErrNotFound when it is
// missing or name is empty.
func newKapp(ctx context.Context, name, kubeconfig string, parallel int) (*kappTool, error) {
	if name == "" {
		return nil, fmt.Errorf("kapp left out: %w", exec.ErrNotFound)
	}
	if _, err := os.Stat(name); err != nil {
		return nil, fmt.Errorf("finding kapp (run `make kapp-bin`): %w", exec.ErrNotFound)
	}
	version, err := execute(ctx, name, "version")
	if err != nil {
		return nil, err
	}
	if version.code != 0 {
		return nil, version.failure("want the version of kapp")
	}
	return &kappTool{bin: name, version: firstLine(version.stdout), kubeconfig: kubeconfig, parallel: parallel}, nil
}

func (t *kappTool) name() string { return nameKapp }

// supports every phase but a saved plan's (kapp saves none) and an ApplySet's.
func (t *kappTool) supports(p phase) bool { return !p.plans() && !p.inSet() }

func (t *kappTool) describe() string {
	return fmt.Sprintf("kapp: %s (%s); %s", t.bin, t.version, strings.Join(t.args("APP", "DIR", phaseUpdate), " "))
}

func (t *kappTool) args(app, dir string, p phase) []string {
	args := []string{"deploy", "-a", app, "-f", dir, "-n", "default", "--kubeconfig", t.kubeconfig,
		"--wait=false", "--apply-concurrency", strconv.Itoa(t.parallel), "--tty=false", "--color=false"}
	if p.diffs() {
		return append(args, "--diff-run", "--diff-changes")
	}
	return append(args, "-y")
}

func (t *kappTool) run(ctx context.Context, p phase, dir string, want int) (outcome, error) {
	res, err := execute(ctx, t.bin, t.args(appName(dir), dir, p)...)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{maxRSS: res.maxRSS}
	if res.code != 0 {
		return out, res.failure("want exit status 0")
	}
	ops := kappOps(res.stdout)
	wantOp := map[phase]string{phaseCreate: "create", phaseUpdate: "update", phaseDiff: "update", phaseDiffLocal: "update"}[p]
	if (wantOp == "" && len(ops) != 0) || (wantOp != "" && (ops[wantOp] != want || len(ops) != 1)) {
		return out, res.failure("want %d %s, got %v", want, wantOp, ops)
	}
	out.summary = fmt.Sprintf("%v", ops)
	if p.diffs() {
		out.summary += fmt.Sprintf(", %d lines", strings.Count(res.stdout, "\n"))
	}
	return out, nil
}

// kappOps counts the operations of the changes table, which kapp prints
// with --tty=false as tab-separated rows: namespace, name, kind, age, op,
// ... (an empty table when nothing changes). Rows without an operation are
// objects kapp only watches (a Deployment's ReplicaSets).
func kappOps(stdout string) map[string]int {
	ops := map[string]int{}
	for _, line := range strings.Split(stdout, "\n") {
		if fields := strings.Split(line, "\t"); len(fields) >= 5 && strings.TrimSpace(fields[4]) != "" {
			ops[strings.TrimSpace(fields[4])]++
		}
	}
	return ops
}

// appName is the kapp app of a tree: its folder's name (kapp-r1, ...).
func appName(dir string) string {
	parts := strings.Split(strings.TrimRight(dir, string(os.PathSeparator)), string(os.PathSeparator))
	return "bench-" + parts[len(parts)-1]
}
