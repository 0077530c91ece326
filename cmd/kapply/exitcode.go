package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kapply/kapply/pkg/apply"
)

// Exit codes, decided here and nowhere else. They follow kubectl: diff uses
// 1 for "differences found", so every real failure of diff is above 1.
const (
	exitOK = 0
	// exitFailed: the command ran and some object failed.
	exitFailed = 1
	// exitDifferences: `diff` found differences (kubectl's 1).
	exitDifferences = 1
	// exitDrift: `status` found an object not in step with its last apply.
	exitDrift = 1
	// exitError: the command could not run (bad flags, no cluster).
	exitError = 2
)

// exitError is an error that asks for a particular exit code. Its message,
// if any, was already printed by the command.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *codedError) Unwrap() error { return e.err }

// withCode wraps err so that the process exits with code.
func withCode(code int, err error) error {
	return &codedError{code: code, err: err}
}

// exitCode prints err (unless already printed) and maps it to the exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var coded *codedError
	if errors.As(err, &coded) {
		if coded.err != nil {
			fmt.Fprintln(stderr, "error:", withFlagNames(coded.err))
		}
		return coded.code
	}
	fmt.Fprintln(stderr, "error:", withFlagNames(err))
	return exitError
}

// someFailed is the exit of a command that went on past failed objects,
// each already printed: 1 with a count when any failed.
func someFailed(failed, total int, what string) error {
	if failed == 0 {
		return nil
	}
	return withCode(exitFailed, fmt.Errorf("%d of %d object(s) %s", failed, total, what))
}

// runFailed is the exit of an apply run that stopped as a whole: 1 for
// files without objects (kubectl's "no objects passed to apply"), 2 for
// everything else (no cluster, a bad ApplySet).
func runFailed(err error) error {
	if errors.Is(err, apply.ErrNoObjects) {
		return withCode(exitFailed, err)
	}
	return withCode(exitError, err)
}
