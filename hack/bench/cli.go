package main

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// cliTool runs kapply or kubectl as a separate process, as a user would.
type cliTool struct {
	label   string
	bin     string
	version string
	// flags are extra flags per verb (apply, diff); a verb missing from
	// the map is one the binary does not have.
	flags      map[string][]string
	kubeconfig string
	cacheDir   string
}

// newKapply checks that the binary applies, and which of diff and
// --parallel it has.
func newKapply(ctx context.Context, cfg config, kubeconfig, cacheDir string) (*cliTool, error) {
	t, err := newKapplyAt(ctx, nameKapply, cfg.kapply, cfg.parallel, kubeconfig, cacheDir)
	if err != nil {
		return nil, err
	}
	t.version += ", " + treeRevision(ctx)
	return t, nil
}

// newKapplyAt is newKapply for the binary bin, labelled label: also an
// older build measured beside the tree's (-baseline).
func newKapplyAt(ctx context.Context, label, bin string, parallel int, kubeconfig, cacheDir string) (*cliTool, error) {
	t := &cliTool{label: label, bin: bin, kubeconfig: kubeconfig, cacheDir: cacheDir}
	version, err := execute(ctx, t.bin, "version", "--client")
	if err != nil {
		return nil, fmt.Errorf("checking %s (run `make build`): %w", t.bin, err)
	}
	if version.code != 0 {
		return nil, version.failure("want the version of kapply")
	}
	t.version = firstLine(version.stdout)
	if t.flags, err = verbFlags(ctx, t.bin, parallel); err != nil {
		return nil, err
	}
	if _, ok := t.flags["apply"]; !ok {
		return nil, fmt.Errorf("%s has no apply command", t.bin)
	}
	return t, nil
}

// newKubectl finds kubectl on PATH; the error wraps exec.ErrNotFound when
// it is not there, or name is empty.
func newKubectl(ctx context.Context, name, kubeconfig, cacheDir string) (*cliTool, error) {
	if name == "" {
		return nil, fmt.Errorf("kubectl left out: %w", exec.ErrNotFound)
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("finding kubectl: %w", err)
	}
	version, err := execute(ctx, bin, "version", "--client")
	if err != nil {
		return nil, err
	}
	if version.code != 0 {
		return nil, version.failure("want the version of kubectl")
	}
	flags := map[string][]string{"apply": nil, "diff": nil}
	return &cliTool{label: nameKubectl, bin: bin, version: firstLine(version.stdout), flags: flags,
		kubeconfig: kubeconfig, cacheDir: cacheDir}, nil
}

// verbFlags asks `BIN VERB --help` for apply and diff: a verb whose help
// fails, or does not describe it, is missing; --parallel is passed where
// the help lists it.
func verbFlags(ctx context.Context, bin string, parallel int) (map[string][]string, error) {
	flags := map[string][]string{}
	for _, verb := range []string{"apply", "diff"} {
		help, err := execute(ctx, bin, verb, "--help")
		if err != nil {
			return nil, fmt.Errorf("asking %s for its %s command: %w", bin, verb, err)
		}
		if help.code != 0 || !strings.Contains(help.stdout, " "+verb+" ") {
			continue
		}
		flags[verb] = nil
		if strings.Contains(help.stdout, "--parallel") {
			flags[verb] = []string{"--parallel", fmt.Sprint(parallel)}
		}
		if verb == "diff" && strings.Contains(help.stdout, "--dry-run") {
			flags[diffLocal] = append(slices.Clone(flags[verb]), "--dry-run=client")
		}
	}
	return flags, nil
}

func (t *cliTool) name() string { return t.label }

func (t *cliTool) supports(p phase) bool {
	_, ok := t.flags[flagsKey(p)]
	return ok
}

func (t *cliTool) verb(p phase) string {
	if p.diffs() {
		return "diff"
	}
	return "apply"
}

// flagsKey is the entry of cliTool.flags for the phase: its verb, or
// diffLocal.
func flagsKey(p phase) string {
	if p == phaseDiffLocal {
		return diffLocal
	}
	if p.diffs() {
		return "diff"
	}
	return "apply"
}

// diffLocal is the flags entry of a diff computed without the server (its
// flags say how).
const diffLocal = "diff (local)"

func (t *cliTool) describe() string {
	var verbs []string
	for _, verb := range []string{"apply", "diff", diffLocal} {
		if flags, ok := t.flags[verb]; ok {
			verbs = append(verbs, strings.TrimSpace(verb+" "+strings.Join(flags, " ")))
		} else {
			verbs = append(verbs, verb+": missing")
		}
	}
	return fmt.Sprintf("%s: %s (%s); %s", t.label, t.bin, t.version, strings.Join(verbs, "; "))
}

func (t *cliTool) run(ctx context.Context, p phase, dir string, want int) (outcome, error) {
	args := []string{t.verb(p), "-f", dir, "-R", "--kubeconfig", t.kubeconfig, "--cache-dir", t.cacheDir}
	res, err := execute(ctx, t.bin, append(args, t.flags[flagsKey(p)]...)...)
	if err != nil {
		return outcome{}, err
	}
	var summary string
	if p.diffs() {
		summary, err = checkDiff(res, want)
	} else {
		summary, err = checkApply(res, p.outcome(), want)
	}
	return outcome{summary: summary, maxRSS: res.maxRSS}, err
}

// checkApply wants exit status 0 and every object reported with outcome,
// counting the last word of each line (`deployment.apps/web configured`).
func checkApply(res result, outcome string, want int) (string, error) {
	counts := map[string]int{}
	for _, line := range strings.Split(res.stdout, "\n") {
		if words := strings.Fields(line); len(words) > 0 {
			counts[words[len(words)-1]]++
		}
	}
	summary := fmt.Sprintf("%d %s", counts[outcome], outcome)
	if res.code != 0 || counts[outcome] != want {
		return "", res.failure("want %d %s, got %v", want, outcome, counts)
	}
	return summary, nil
}

// checkDiff wants exit status 1 (differences found) and a non-empty diff.
// The number of files in it (`+++ ` lines) is reported, not checked: the
// format of a diff is the tool's own.
func checkDiff(res result, want int) (string, error) {
	if res.code != 1 || strings.TrimSpace(res.stdout) == "" {
		return "", res.failure("want exit status 1 and a diff of %d objects", want)
	}
	files := 0
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(line, "+++ ") {
			files++
		}
	}
	return fmt.Sprintf("%d objects in the diff (%d expected), %d lines", files, want, strings.Count(res.stdout, "\n")), nil
}

// treeRevision describes the work tree kapply was just built from, for the
// record; it is not worth failing the benchmark over.
func treeRevision(ctx context.Context) string {
	res, err := execute(ctx, "git", "describe", "--always", "--dirty")
	if err != nil || res.code != 0 {
		return "tree revision unknown"
	}
	return "tree " + firstLine(res.stdout)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
