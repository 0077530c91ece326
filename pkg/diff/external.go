package diff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// External writes both sides of every comparison into directories LIVE and
// MERGED, a file per object named as kubectl names it, and runs program
// (a command, possibly with simple flags, see ExternalCommand) on the two
// directories, as kubectl does with KUBECTL_EXTERNAL_DIFF. The program's
// exit status 0 means no differences, 1 differences, anything else an
// error.
func External(ctx context.Context, program string, comparisons []Comparison, stdout, stderr io.Writer) (differ bool, err error) {
	args, err := ExternalCommand(program)
	if err != nil {
		return false, err
	}
	root, err := os.MkdirTemp("", "kapply-diff-")
	if err != nil {
		return false, fmt.Errorf("creating directories for the external diff: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(root); rmErr != nil && err == nil {
			err = fmt.Errorf("removing the external diff's directories: %w", rmErr)
		}
	}()
	live, merged := filepath.Join(root, liveDir), filepath.Join(root, mergedDir)
	if err := writeSides(live, merged, comparisons); err != nil {
		return false, err
	}
	cmd := exec.CommandContext(ctx, args[0], append(args[1:], live, merged)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return exitStatus(args[0], cmd.Run())
}

// simpleArg is what kubectl passes on to KUBECTL_EXTERNAL_DIFF's program:
// letters, digits, dashes and equals signs (kubectl's diff.go).
var simpleArg = regexp.MustCompile(`^[a-zA-Z0-9=-]+$`)

// ExternalCommand splits an external diff setting into the program and its
// arguments. As in kubectl, the program is a path or a name looked up in
// PATH and each argument a simple flag (letters, digits, - and =), so that
// the setting cannot hand the program a script to run ("sh -c ...").
// kubectl drops other arguments silently; kapply refuses them.
func ExternalCommand(program string) ([]string, error) {
	args := strings.Fields(program)
	if len(args) == 0 {
		return nil, errors.New("the external diff program is empty")
	}
	for _, arg := range args[1:] {
		if !simpleArg.MatchString(arg) {
			return nil, fmt.Errorf("external diff %q: argument %q is not allowed: arguments may hold only letters, digits, '-' and '=' "+
				"(as in kubectl); to run anything more, put it in a script and name the script", program, arg)
		}
	}
	return args, nil
}

// writeSides writes each side of each comparison; a side that does not
// exist (a creation) gets no file, as in kubectl.
func writeSides(live, merged string, comparisons []Comparison) error {
	for _, dir := range []string{live, merged} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	for _, c := range comparisons {
		if err := writeSide(filepath.Join(live, c.Object.Name), c.Live); err != nil {
			return err
		}
		if err := writeSide(filepath.Join(merged, c.Object.Name), c.After); err != nil {
			return err
		}
	}
	return nil
}

func writeSide(path, text string) error {
	if text == "" {
		return nil
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// exitStatus maps the program's exit to (differences, error).
func exitStatus(program string, err error) (bool, error) {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return false, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return true, nil
	}
	return false, fmt.Errorf("running the external diff %s: %w", program, err)
}
