package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/config"
	"k8s.io/kubectl/pkg/kuberc"
)

// kubercDisabled is kubectl's KUBECTL_KUBERC=false feature gate
// (cmdutil.KubeRC.IsDisabled). It is read here because kubectl's cmd/util
// package would build most of kubectl's command library into kapply for
// one getenv.
func kubercDisabled() bool {
	return strings.ToLower(os.Getenv("KUBECTL_KUBERC")) == "false"
}

// addKubercFlag adds kubectl's --kuberc to the root's persistent flags, as
// kubectl does, unless the feature gate turns kuberc off. kuberc reads the
// flag from the arguments before they are parsed, so it binds nothing.
func addKubercFlag(flags *pflag.FlagSet) {
	if !kubercDisabled() {
		kuberc.NewPreferences().AddFlags(flags)
	}
}

// applyPreferences reads kubectl's preferences file (--kuberc, $KUBERC,
// ~/.kube/kuberc; KUBERC=off turns it off) with kubectl's own loader and
// applies it to root before args are parsed, as kubectl 1.37 does in
// NewKubectlCommand: aliases, flag defaults per command (a flag given in
// args wins) and the credential plugin policy, which reaches every client
// through configFlags. The file is written for kubectl, so kapply differs
// where kubectl's loader would stop it or misapply it: a default or alias
// option for a flag kapply lacks is a warning, not a failure; a default for
// a command kapply lacks (get, logs) is skipped without kubectl's warning;
// a default for a subcommand kapply lacks (apply view-last-applied) is not
// applied to its parent.
func applyPreferences(root *cobra.Command, configFlags *genericclioptions.ConfigFlags, args []string, errOut io.Writer) error {
	if kubercDisabled() {
		return nil
	}
	args, done, err := kubercReadOnce(args)
	if err != nil {
		// kubectl prints this without "error: " and exits 1.
		return withCode(exitFailed, &plainError{fmt.Sprintf("error occurred while applying preferences kuberc error kuberc: %v", err)})
	}
	defer done()
	// The loader reads the file again and reports its errors; this read
	// only looks ahead at what the loader will do.
	prefs, err := kuberc.DefaultGetPreferences(explicitKuberc(args), io.Discard)
	if err != nil || prefs == nil {
		prefs = &config.Preference{}
	}
	removeShadows := shadowSubcommandsKapplyLacks(root, prefs)
	ignored := ignoreFlagsKapplyLacks(root, prefs, args, errOut)
	var loaderOut bytes.Buffer
	_, err = kuberc.NewPreferences().Apply(root, configFlags, append([]string{root.Name()}, args...), &loaderOut)
	removeShadows()
	writeLoaderWarnings(errOut, loaderOut.String())
	if err != nil {
		return withCode(exitFailed, &plainError{fmt.Sprintf("error occurred while applying preferences %v", err)})
	}
	if running, _, err := root.Find(args); err == nil {
		if running.Name() == "plan" {
			if err := applyDefaultsToPlan(root, running, prefs, args); err != nil {
				return withCode(exitFailed, &plainError{fmt.Sprintf("error occurred while applying preferences %v", err)})
			}
		}
		markKubercDefaults(running)
	}
	for _, flag := range ignored {
		flag.refuse = true
	}
	logOriginalCommand(root)
	return nil
}

// applyDefaultsToPlan gives kapply plan kuberc's defaults of apply, for
// the flags plan shares with apply: a plan is what apply would do, and a
// kuberc that makes every apply server-side made every plan client-side,
// which apply --plan then ran against the user's preference. plan's own
// defaults, set by the loader, and the command line win; apply's flags
// plan lacks (--wait) are left out without a word.
func applyDefaultsToPlan(root, plan *cobra.Command, prefs *config.Preference, args []string) error {
	_ = plan.InheritedFlags() // merges the persistent flags, as the loader does
	for _, d := range prefs.Defaults {
		target, rest, err := root.Find(strings.Fields(d.Command))
		if err != nil || len(rest) > 0 || target.Name() != "apply" {
			continue
		}
		for _, option := range d.Options {
			flag := plan.Flag(option.Name)
			if flag == nil || flag.Changed || givenInArgs(flag, args) {
				continue
			}
			if err := plan.Flags().Set(option.Name, option.Default); err != nil {
				return fmt.Errorf("could not apply override value %s to flag %s in command %s err: %w", option.Default, option.Name, d.Command, err)
			}
		}
	}
	return nil
}

// givenInArgs reports whether args give flag (--name, --name=v, -s...),
// before a "--".
func givenInArgs(flag *pflag.Flag, args []string) bool {
	for _, arg := range args {
		switch {
		case arg == "--":
			return false
		case arg == "--"+flag.Name || strings.HasPrefix(arg, "--"+flag.Name+"="):
			return true
		case flag.Shorthand != "" && len(arg) > 1 && arg[0] == '-' && arg[1] != '-' && strings.Contains(arg[1:], flag.Shorthand):
			return true
		}
	}
	return false
}

// kubercDefaultsAnnotation lists, on the command that runs, the flags
// kuberc's defaults set: before the arguments are parsed, every flag set
// is one of them.
const kubercDefaultsAnnotation = "kapply.dev/kuberc-defaults"

func markKubercDefaults(cmd *cobra.Command) {
	var names []string
	cmd.Flags().Visit(func(flag *pflag.Flag) { names = append(names, flag.Name) })
	if len(names) == 0 {
		return
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[kubercDefaultsAnnotation] = strings.Join(names, ",")
}

// dropKubercDefaults resets the flags among names whose value came from
// kuberc's defaults, not the command line (apply --plan: the plan fixed
// them when it was made, and kapply plan took the same defaults).
func dropKubercDefaults(cmd *cobra.Command, names ...string) {
	fromKuberc := strings.Split(cmd.Annotations[kubercDefaultsAnnotation], ",")
	for _, name := range names {
		flag := cmd.Flags().Lookup(name)
		if flag == nil || !slices.Contains(fromKuberc, name) {
			continue
		}
		if slice, ok := flag.Value.(pflag.SliceValue); ok {
			_ = slice.Replace(nil) // a string slice takes an empty list
		} else if err := flag.Value.Set(flag.DefValue); err != nil {
			continue // a value its own default does not parse into: leave it to be refused
		}
		flag.Changed = false
		klog.V(1).Infof("kuberc's default --%s is not used by apply --plan: the plan fixed it", name)
	}
}

// writeLoaderWarnings writes what kubectl's loader printed, less its
// warning for a default of a command kapply does not have: a kuberc
// written for kubectl has defaults for get or logs, and kapply would
// otherwise print one such line at every run.
func writeLoaderWarnings(errOut io.Writer, printed string) {
	for line := range strings.Lines(printed) {
		if strings.HasPrefix(line, `Warning: command "`) && strings.HasSuffix(line, "\" not found to set kuberc override\n") {
			continue
		}
		io.WriteString(errOut, line) //nolint:errcheck // a warning lost on a closed stderr stops nothing
	}
}

// shadowSubcommandsKapplyLacks adds, for each default or alias whose command goes
// past kapply's tree (kubectl's "apply view-last-applied", where kapply's
// apply has no subcommands), a hidden placeholder for the missing
// subcommand: cobra's Find would otherwise stop at the parent and the
// loader would give kapply apply the defaults of view-last-applied. It
// returns the function that removes them again.
func shadowSubcommandsKapplyLacks(root *cobra.Command, prefs *config.Preference) (remove func()) {
	var added []*cobra.Command
	commands := make([]string, 0, len(prefs.Defaults)+len(prefs.Aliases))
	for _, d := range prefs.Defaults {
		commands = append(commands, d.Command)
	}
	// An alias of "apply view-last-applied" would otherwise run kapply's
	// apply: kubectl's loader copies the command Find stops at and drops
	// the rest of the alias's words, so a read became a write.
	for _, a := range prefs.Aliases {
		commands = append(commands, a.Command)
	}
	for _, command := range commands {
		parent, rest, err := root.Find(strings.Fields(command))
		if err != nil || len(rest) == 0 || parent == root || strings.HasPrefix(rest[0], "-") {
			continue
		}
		missing := command
		// An alias of the missing command is a copy of the shadow: it fails.
		shadow := &cobra.Command{Use: rest[0], Hidden: true, DisableFlagParsing: true, RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("kapply has no command %q", missing)
		}}
		parent.AddCommand(shadow)
		added = append(added, shadow)
	}
	return func() {
		for _, shadow := range added {
			shadow.Parent().RemoveCommand(shadow)
		}
	}
}

// logOriginalCommand logs at -v=1 the command as typed, before kuberc's
// defaults and aliases, as kubectl does.
func logOriginalCommand(root *cobra.Command) {
	next := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if next != nil {
			if err := next(cmd, args); err != nil {
				return err
			}
		}
		if original, ok := cmd.Annotations[kuberc.KubeRCOriginalCommandAnnotation]; ok {
			klog.V(1).Infof("original command: %q", cmd.Root().Name()+" "+original)
		}
		return nil
	}
}

// ignoreFlagsKapplyLacks warns of each flag that the preferences set for
// the command args run (a default of that command, or an option of the
// alias args run) and that kapply lacks, and gives that command a hidden
// placeholder for it, so that kubectl's loader sets it and goes on.
func ignoreFlagsKapplyLacks(root *cobra.Command, prefs *config.Preference, args []string, errOut io.Writer) []*ignoredFlag {
	var ignored []*ignoredFlag
	add := func(cmd *cobra.Command, options []config.CommandOptionDefault, source string) {
		_ = cmd.InheritedFlags() // merges the persistent flags, as the loader does
		for _, option := range options {
			if strings.HasPrefix(option.Name, "-") || cmd.Flag(option.Name) != nil {
				continue // the loader's to refuse or to set
			}
			fmt.Fprintf(errOut, "Warning: kuberc %s sets --%s, which %q of kapply does not have; ignoring it\n", source, option.Name, cmd.CommandPath())
			flag := &ignoredFlag{}
			cmd.Flags().Var(flag, option.Name, "")
			cmd.Flags().Lookup(option.Name).Hidden = true
			ignored = append(ignored, flag)
		}
	}
	running, _, err := root.Find(args)
	if err == nil {
		for _, d := range prefs.Defaults {
			if target, _, err := root.Find(strings.Fields(d.Command)); err == nil && target.Name() == running.Name() {
				add(running, d.Options, fmt.Sprintf("default of %q", d.Command))
			}
		}
		return ignored
	}
	name := firstWord(args)
	for _, alias := range prefs.Aliases {
		if target, _, err := root.Find(strings.Fields(alias.Command)); alias.Name == name && err == nil {
			add(target, alias.Options, fmt.Sprintf("alias %q", alias.Name))
		}
	}
	return ignored
}

// explicitKuberc is the --kuberc of args, or "": kuberc reads it before
// cobra parses the flags, and so must this.
func explicitKuberc(args []string) string {
	flags := pflag.NewFlagSet("kuberc", pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	flags.ParseErrorsAllowlist.UnknownFlags = true
	path := flags.String("kuberc", "", "")
	_ = flags.Parse(args) // the loader reports a bad --kuberc itself
	return *path
}

// firstWord is the first argument that is not a flag: what kuberc takes
// for an alias's name.
func firstWord(args []string) string {
	for _, arg := range args {
		if !strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, cobra.ShellCompRequestCmd) {
			return arg
		}
	}
	return ""
}

// ignoredFlag stands for a flag kuberc sets that kapply lacks: it takes
// kuberc's value and drops it, and once kuberc is applied it refuses a
// value from the command line, where kapply has no such flag.
type ignoredFlag struct{ refuse bool }

func (f *ignoredFlag) String() string { return "" }
func (f *ignoredFlag) Type() string   { return "string" }

func (f *ignoredFlag) Set(string) error {
	if f.refuse {
		return fmt.Errorf("kapply has no such flag")
	}
	return nil
}

// maxKubercSize bounds the preferences file kapply reads: kubectl's loader
// reads any file whole, and KUBERC=/dev/zero grew the process past 20 GB
// until the kernel killed it. A kuberc holds a few defaults and aliases.
const maxKubercSize = 1 << 20

// kubercReadOnce returns args naming a regular file for the kuberc the
// loader would read: the look-ahead above and kubectl's loader each read
// the file, and a FIFO (--kuberc <(...)) read twice gave the loader
// nothing, so its defaults (--dry-run=server) were dropped without a word.
// A kuberc that is not a regular file is read here once, at most
// maxKubercSize, into a temporary file; done removes it. A larger kuberc is
// refused. Every other failure is left to the loader to report.
func kubercReadOnce(args []string) (loaderArgs []string, done func(), err error) {
	done = func() {}
	path, _, err := kuberc.LoadKuberc(explicitKuberc(args))
	if err != nil || path == "" {
		return args, done, nil
	}
	info, err := os.Stat(path)
	switch {
	case err != nil || info.IsDir():
		return args, done, nil
	case info.Mode().IsRegular() && info.Size() > maxKubercSize:
		return nil, done, fmt.Errorf("reading %s: larger than %d MiB, the most kapply reads from a kuberc", path, maxKubercSize>>20)
	case info.Mode().IsRegular():
		return args, done, nil
	}
	data, err := readKubercOnce(path)
	if err != nil {
		return nil, done, err
	}
	copied, err := os.CreateTemp("", "kuberc-")
	if err != nil {
		return nil, done, fmt.Errorf("copying %s: %w", path, err)
	}
	done = func() { _ = os.Remove(copied.Name()) } // a temporary file left behind harms nothing
	if _, err := copied.Write(data); err != nil {
		_ = copied.Close() // the write's error is the one to report
		return nil, done, fmt.Errorf("copying %s: %w", path, err)
	}
	if err := copied.Close(); err != nil {
		return nil, done, fmt.Errorf("copying %s: %w", path, err)
	}
	return append([]string{"--kuberc=" + copied.Name()}, withoutKubercFlag(args)...), done, nil
}

// readKubercOnce reads the kuberc at path, a FIFO or a device, to its end
// or past maxKubercSize.
func readKubercOnce(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read only
	data, err := io.ReadAll(io.LimitReader(f, maxKubercSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxKubercSize {
		return nil, fmt.Errorf("reading %s: larger than %d MiB, the most kapply reads from a kuberc", path, maxKubercSize>>20)
	}
	return data, nil
}

// withoutKubercFlag is args less every --kuberc and its value.
func withoutKubercFlag(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--":
			return append(out, args[i:]...)
		case arg == "--kuberc":
			i++
		case !strings.HasPrefix(arg, "--kuberc="):
			out = append(out, arg)
		}
	}
	return out
}
