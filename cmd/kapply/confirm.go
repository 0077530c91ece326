package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/plan"
)

// ttyPath is the terminal asked when stdin is not one (it carries the
// files, as with -f -).
const ttyPath = "/dev/tty"

// errDeclined ends apply --confirm answered anything but yes: exit 1, so
// that `kapply apply -i && next-step` stops. kubectl has no apply -i; its
// delete --interactive exits 0 on "n", which would run next-step.
var errDeclined = withCode(exitFailed, &plainError{"apply declined: nothing written"})

// errNoTerminal refuses --confirm where no one can answer.
var errNoTerminal = errors.New("--confirm needs a terminal to ask on: stdin is not one and " + ttyPath + " cannot be opened; nothing was applied (pass --yes to apply the plan shown without asking)")

// confirmed asks "Continue? [y/N]" on the terminal and returns nil when
// the answer was yes; any other answer is errDeclined.
func confirmed(streams genericiooptions.IOStreams) error {
	answers, closeTTY, err := terminal(streams.In)
	if err != nil {
		return runFailed(err)
	}
	defer closeTTY()
	fmt.Fprint(streams.Out, "Continue? [y/N] ")
	line, err := bufio.NewReader(answers).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return runFailed(fmt.Errorf("reading the answer: %w", err))
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errDeclined
}

// terminal is where the answer is read: stdin when it is a terminal, else
// the process's controlling terminal.
func terminal(stdin io.Reader) (io.Reader, func(), error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f, func() {}, nil
	}
	tty, err := os.Open(ttyPath)
	if err != nil {
		return nil, nil, errNoTerminal
	}
	return tty, func() { tty.Close() }, nil
}

// hasChanges reports whether any item of p writes or deletes.
func hasChanges(p *plan.Plan) bool {
	for _, it := range p.Items {
		if it.Action != plan.Unchanged {
			return true
		}
	}
	return false
}
