package main

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes, decided here and nowhere else. They follow kubectl: diff uses
// 1 for "differences found", so every real failure of diff is above 1.
const (
	exitOK = 0
	// exitFailed: the command ran and some object failed.
	exitFailed = 1
	// exitDifferences: `diff` found differences (kubectl's 1).
	exitDifferences = 1
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
			fmt.Fprintln(stderr, "error:", coded.err)
		}
		return coded.code
	}
	fmt.Fprintln(stderr, "error:", err)
	return exitError
}
