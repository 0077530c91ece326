package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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

// verbFlags asks `BIN VERB --help` for apply, diff and plan: a verb whose
// help fails, or does not describe it, is missing; --parallel is passed
// where the help lists it. apply --plan is there when apply's help lists
// --plan and plan is there too.
func verbFlags(ctx context.Context, bin string, parallel int) (map[string][]string, error) {
	flags := map[string][]string{}
	for _, verb := range []string{"apply", "diff", "plan"} {
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
		if verb == "apply" && strings.Contains(help.stdout, "--plan") {
			flags[applyPlan] = slices.Clone(flags[verb])
		}
		if verb == "apply" && strings.Contains(help.stdout, "--history-limit") {
			flags[applySet] = slices.Clone(flags[verb])
		}
	}
	if _, ok := flags["plan"]; !ok {
		delete(flags, applyPlan)
	}
	return flags, nil
}

func (t *cliTool) name() string { return t.label }

func (t *cliTool) supports(p phase) bool {
	_, ok := t.flags[flagsKey(p)]
	return ok
}

// verbOf is the kapply or kubectl command that runs the phase.
func verbOf(p phase) string {
	switch {
	case p.diffs():
		return "diff"
	case p == phasePlan:
		return "plan"
	}
	return "apply"
}

// flagsKey is the entry of cliTool.flags for the phase: its verb, or
// diffLocal, or applyPlan.
func flagsKey(p phase) string {
	switch p {
	case phaseDiffLocal:
		return diffLocal
	case phaseApplyPlan:
		return applyPlan
	}
	if p.inSet() {
		return applySet
	}
	return verbOf(p)
}

// Flags entries that are not a verb of their own: a diff computed without
// the server (its flags say how) and the execution of a saved plan.
const (
	diffLocal = "diff (local)"
	applyPlan = "apply --plan"
	applySet  = "apply --applyset"
)

func (t *cliTool) describe() string {
	var verbs []string
	for _, verb := range []string{"apply", "diff", diffLocal, "plan", applyPlan, applySet} {
		if flags, ok := t.flags[verb]; ok {
			verbs = append(verbs, strings.TrimSpace(verb+" "+strings.Join(flags, " ")))
		} else {
			verbs = append(verbs, verb+": missing")
		}
	}
	return fmt.Sprintf("%s: %s (%s); %s", t.label, t.bin, t.version, strings.Join(verbs, "; "))
}

func (t *cliTool) run(ctx context.Context, p phase, dir string, want int) (outcome, error) {
	args := []string{verbOf(p), "-f", dir, "-R", "--kubeconfig", t.kubeconfig, "--cache-dir", t.cacheDir}
	switch p {
	case phasePlan:
		args = append(args, "-o", planFile(dir))
	case phaseApplyPlan:
		args = append(args, "--plan", planFile(dir))
	}
	if p.inSet() {
		// The parent: a Secret in the kubeconfig's namespace (the tree's
		// objects name their own), one per tree.
		args = append(args, "--prune", "--applyset", "set-"+filepath.Base(dir))
		if p != phaseSetHistory {
			args = append(args, "--history-limit", "0")
		}
	}
	res, err := execute(ctx, t.bin, append(args, t.flags[flagsKey(p)]...)...)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{maxRSS: res.maxRSS}
	switch {
	case p.diffs():
		out.summary, err = checkDiff(res, want)
	case p == phasePlan:
		if out.summary, err = checkPlan(res, want); err == nil {
			out.planBytes, out.yamlBytes, err = planSizes(dir)
			out.summary += fmt.Sprintf(", plan file %s, %.2fx the YAML's %s",
				formatBytes(out.planBytes), float64(out.planBytes)/float64(out.yamlBytes), formatBytes(out.yamlBytes))
		}
	default:
		out.summary, err = checkApply(res, p.outcome(), want)
	}
	return out, err
}

// planFile is where the plan phase saves the plan of the tree in dir:
// beside the tree, not in it (apply -R would read it as a manifest).
func planFile(dir string) string {
	return filepath.Clean(dir) + ".plan.json"
}

// checkPlan wants exit status 0 and kapply plan's count line saying that
// every object is to be patched (`Plan: 0 to create, 1000 to patch, 0
// unchanged.`).
func checkPlan(res result, want int) (string, error) {
	line := fmt.Sprintf("Plan: 0 to create, %d to patch, 0 unchanged.", want)
	if res.code != 0 || !slices.Contains(strings.Split(res.stdout, "\n"), line) {
		return "", res.failure("want the line %q", line)
	}
	return fmt.Sprintf("%d to patch", want), nil
}

// planSizes are the bytes of the plan file of the tree in dir and of the
// YAML files it was made from.
func planSizes(dir string) (planBytes, yamlBytes int64, err error) {
	info, err := os.Stat(planFile(dir))
	if err != nil {
		return 0, 0, fmt.Errorf("the plan file: %w", err)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		yamlBytes += fi.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("measuring the tree %s: %w", dir, err)
	}
	return info.Size(), yamlBytes, nil
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
