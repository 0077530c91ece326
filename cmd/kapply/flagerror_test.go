package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestFlagErrorsAsKubectl: an unknown flag or a value cobra cannot parse
// exits 1 with kubectl's two lines ("error: unknown flag: --foo" / "See
// 'kubectl apply --help' for usage."); diff exits 2 with its own hint, as
// kubectl diff. A negative duration is refused the same way. Where kubectl has the command, its stderr and exit code are
// compared, kubectl's name put for kapply's.
func TestFlagErrorsAsKubectl(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		want    string
		kubectl bool
	}{
		{[]string{"apply", "--foo"}, 1, "error: unknown flag: --foo\nSee 'kapply apply --help' for usage.\n", true},
		{[]string{"apply", "--timeout=abc", "-f", "x"}, 1, "error: invalid argument \"abc\" for \"--timeout\" flag: time: invalid duration \"abc\"\nSee 'kapply apply --help' for usage.\n", true},
		// kubectl takes a negative --timeout; kapply read it as the
		// default (one minute) until it refused it as a bad value.
		{[]string{"apply", "--timeout=-5s", "-f", "x"}, 1, "error: invalid argument \"-5s\" for \"--timeout\" flag: must not be negative\nSee 'kapply apply --help' for usage.\n", false},
		{[]string{"delete", "--timeout", "-1m", "-f", "x"}, 1, "error: invalid argument \"-1m\" for \"--timeout\" flag: must not be negative\nSee 'kapply delete --help' for usage.\n", false},
		{[]string{"delete", "--foo"}, 1, "error: unknown flag: --foo\nSee 'kapply delete --help' for usage.\n", true},
		{[]string{"adopt", "--foo"}, 1, "error: unknown flag: --foo\nSee 'kapply adopt --help' for usage.\n", false},
		{[]string{"diff", "--foo"}, 2, "error: unknown flag: --foo\nSee 'kapply diff -h' for help and examples\n", true},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		code := exitCode(run(tc.args, streams), &errOut)
		if code != tc.code || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d, stderr %q", strings.Join(tc.args, " "), code, errOut.String(), out.String(), tc.code, tc.want)
		}
		if tc.kubectl {
			compareFlagErrorWithKubectl(t, tc.args, code, errOut.String())
		}
	}
}

func compareFlagErrorWithKubectl(t *testing.T, args []string, code int, stderr string) {
	t.Helper()
	if !testcluster.HaveKubectl(t) {
		return
	}
	cmd := exec.Command("kubectl", args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	theirs := strings.ReplaceAll(errOut.String(), "'kubectl ", "'kapply ")
	if exit.ExitCode() != code || theirs != stderr {
		t.Errorf("kubectl %s: exit %d, stderr %q; kapply: exit %d, stderr %q", strings.Join(args, " "), exit.ExitCode(), errOut.String(), code, stderr)
	}
}
