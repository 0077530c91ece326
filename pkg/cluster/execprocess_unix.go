//go:build unix

package cluster

import (
	"os/exec"
	"syscall"
)

// startOwnGroup makes cmd the leader of a new process group, so that
// killing it kills what it started too.
func startOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killPlugin kills cmd's process group, or cmd alone when it shares
// kapply's (an interactive plugin, which must stay in the terminal's
// foreground group to read it).
func killPlugin(cmd *exec.Cmd, ownGroup bool) error {
	if ownGroup {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return cmd.Process.Kill()
}
