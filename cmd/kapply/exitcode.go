package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/check"
)

// Exit codes, decided here and nowhere else. They follow kubectl: diff uses
// 1 for "differences found", so every real failure of diff is above 1.
const (
	exitOK = 0
	// exitFailed: the command ran and some object failed; for apply and
	// delete, also any error of the whole run (kubectl exits 1 on all).
	exitFailed = 1
	// exitDifferences: `diff` found differences (kubectl's 1).
	exitDifferences = 1
	// exitDrift: `status` found an object not in step with its last apply.
	exitDrift = 1
	// exitError: diff, and kapply's own commands, could not run (bad
	// flags, no cluster).
	exitError = 2
	// exitDenied: --check found a write the cluster's admission policies
	// deny (plan, diff and apply; apply wrote nothing).
	exitDenied = 3
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
			printError(stderr, coded.err)
		}
		return coded.code
	}
	printError(stderr, err)
	return exitError
}

// printError prints err as kubectl does: each error (of several joined)
// on its own line after "error: ", except kubectl's sentence for a refused
// connection, which it prints alone.
func printError(stderr io.Writer, err error) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			printError(stderr, e)
		}
		return
	}
	if plain := (*plainError)(nil); errors.As(err, &plain) {
		fmt.Fprintln(stderr, plain.msg)
		return
	}
	if unreachable := (*apply.UnreachableError)(nil); errors.As(err, &unreachable) {
		fmt.Fprintln(stderr, unreachable)
		return
	}
	fmt.Fprintln(stderr, "error:", withFlagNames(err))
}

// someFailed is the exit of a command that went on past failed objects,
// each already printed: 1 with a count when any failed.
func someFailed(failed, total int, what string) error {
	if failed == 0 {
		return nil
	}
	return withCode(exitFailed, fmt.Errorf("%d of %d object(s) %s", failed, total, what))
}

// runFailed is the exit of an apply or delete that stopped as a whole:
// bad flag values, no objects, a server refused or unavailable, a bad
// ApplySet. kubectl exits 1 on every error of these commands (its
// CheckErr), so scripts cannot tell these from a failed object either.
func runFailed(err error) error {
	if refused := (*check.RefusedError)(nil); errors.As(err, &refused) {
		return withCode(exitError, err) // --check could not read the policies
	}
	return withCode(exitFailed, err)
}

// plainError is printed as it is, without "error: ": kubectl's own words
// for an error that it prints so (a kuberc that cannot be applied).
type plainError struct{ msg string }

func (e *plainError) Error() string { return e.msg }
