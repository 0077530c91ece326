// Package peakrss measures the peak resident memory of a command a test or
// the benchmark starts.
//
// The kernel's rusage of a child cannot be used as it is: Linux carries a
// process's peak RSS across exec, and os/exec starts the child on the
// parent's memory (vfork), so the child's reported peak starts at the
// parent's — a test binary under the race detector, or the benchmark
// holding 10,000 objects, easily above what is measured (CI saw kapply's
// 315 MiB reported as 455 MiB). So the command is started by a runner: this
// same program started again, small when it starts, which runs the command,
// writes its peak to a file and exits with its status.
package peakrss

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// fileEnv names, in the runner's environment, the file it writes the
// command's peak RSS to.
const fileEnv = "KAPPLY_PEAKRSS_FILE"

// Measured is a command prepared by Command: run it with Cmd, then read
// its peak with Peak.
type Measured struct {
	Cmd  *exec.Cmd
	file string
}

// Command is exec.CommandContext(ctx, name, args...) run through the
// runner (ctx's end kills the runner, and with it the command). The
// program must call ServeRunner first thing in main (or TestMain).
// Signals sent to Cmd.Process reach the command (SIGKILL only the runner;
// the command is killed with it).
func Command(ctx context.Context, name string, args ...string) (*Measured, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to run %s through: %w", name, err)
	}
	file, err := os.CreateTemp("", "kapply-peakrss-")
	if err != nil {
		return nil, fmt.Errorf("creating the peak RSS file: %w", err)
	}
	file.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), fileEnv+"="+file.Name())
	return &Measured{Cmd: cmd, file: file.Name()}, nil
}

// Peak is the command's peak RSS in bytes once Cmd has been waited for; it
// removes the file it was read from.
func (m *Measured) Peak() (int64, error) {
	defer os.Remove(m.file)
	data, err := os.ReadFile(m.file)
	if err != nil {
		return 0, err
	}
	if len(data) == 0 {
		return 0, errors.New("the runner wrote no peak RSS: the command did not start")
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// ServeRunner returns at once unless this process is a runner started by
// Command; a runner runs its command, writes the peak, and exits.
func ServeRunner() {
	path := os.Getenv(fileEnv)
	if path == "" {
		return
	}
	os.Unsetenv(fileEnv)
	os.Exit(run(path, os.Args[1:]))
}

// run runs args with the runner's standard streams, forwards SIGINT and
// SIGTERM to it, writes its peak RSS to path and returns its exit status.
func run(path string, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "peakrss: no command")
		return 127
	}
	// Pdeathsig fires when the thread that started the child ends: keep it.
	runtime.LockOSThread()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		return 127
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	if usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		_ = os.WriteFile(path, []byte(strconv.FormatInt(usage.Maxrss<<10, 10)), 0o600) // KiB on Linux
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	case errors.As(err, &exit):
		return 128 + int(exit.Sys().(syscall.WaitStatus).Signal()) // as a shell says it
	case err != nil:
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		return 127
	}
	return 0
}
