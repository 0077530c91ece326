package peakrss

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	ServeRunner()
	os.Exit(m.Run())
}

// hold is what this test binary holds while it starts the command: a
// child started straight from it would report at least this much.
var hold []byte

// TestPeakIsTheCommandsOwn: with 400 MiB resident here, a small command
// run through the runner reports its own peak, not this process's — which
// the kernel's rusage of a direct child does.
func TestPeakIsTheCommandsOwn(t *testing.T) {
	hold = make([]byte, 400<<20)
	for i := 0; i < len(hold); i += 4096 {
		hold[i] = 1 // one byte a page makes the page resident
	}
	direct := exec.Command("true")
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	m, err := Command(context.Background(), "true")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Cmd.Run(); err != nil {
		t.Fatal(err)
	}
	peak, err := m.Peak()
	if err != nil {
		t.Fatal(err)
	}
	directPeak := direct.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("true: %d KiB through the runner, %d MiB by the rusage of a direct child", peak>>10, directPeak>>20)
	if peak <= 0 || peak > 100<<20 {
		t.Errorf("peak %d bytes for true; want its own few MiB", peak)
	}
	hold = nil
}

// TestExitStatusAndSignals: the runner exits with the command's status, and
// a SIGTERM sent to it reaches the command.
func TestExitStatusAndSignals(t *testing.T) {
	m, err := Command(context.Background(), "sh", "-c", "exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Cmd.Run(); m.Cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("exit %v; want 3", err)
	}
	m.Peak()

	m, err = Command(context.Background(), "sleep", "30")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the command runs, the runner's handler is set (before Start).
	children := fmt.Sprintf("/proc/%d/task/%d/children", m.Cmd.Process.Pid, m.Cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if data, _ := os.ReadFile(children); len(strings.TrimSpace(string(data))) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runner started no command")
		}
	}
	if err := m.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	m.Cmd.Wait()
	if code := m.Cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d after SIGTERM; want %d: sleep ended by it", code, 128+int(syscall.SIGTERM))
	}
	if _, err := m.Peak(); err != nil {
		t.Error(err)
	}
}
