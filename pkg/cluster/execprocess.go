package cluster

import (
	"errors"
	"os/exec"
	"sync"
	"time"
)

// pluginWaitDelay is how long a killed or finished plugin's pipes are
// read after it ended: whatever it started and left behind cannot keep
// kapply waiting on them.
const pluginWaitDelay = 2 * time.Second

// runningPlugins are the plugin processes this process started and has
// not yet waited for; StopExecPlugins kills them. They are the process's
// own children, as client-go's authenticators are the process's.
var runningPlugins = struct {
	mu      sync.Mutex
	cmds    map[*exec.Cmd]bool
	stopped bool
}{cmds: map[*exec.Cmd]bool{}}

// errStopped: kapply is exiting; no plugin starts any more.
var errStopped = errors.New("kapply is exiting")

// runPlugin runs cmd, which its context kills with what it started (its
// process group, unless it must share kapply's to read the terminal), as
// StopExecPlugins does.
func runPlugin(cmd *exec.Cmd, interactive bool) error {
	ownGroup := !interactive
	if ownGroup {
		startOwnGroup(cmd)
	}
	cmd.Cancel = func() error { return killPlugin(cmd, ownGroup) }
	cmd.WaitDelay = pluginWaitDelay
	runningPlugins.mu.Lock()
	if runningPlugins.stopped {
		runningPlugins.mu.Unlock()
		return errStopped
	}
	err := cmd.Start()
	if err == nil {
		runningPlugins.cmds[cmd] = ownGroup
	}
	runningPlugins.mu.Unlock()
	if err != nil {
		return err
	}
	err = cmd.Wait()
	runningPlugins.mu.Lock()
	delete(runningPlugins.cmds, cmd)
	runningPlugins.mu.Unlock()
	return err
}

// StopExecPlugins kills every exec credential plugin still running (with
// their process groups) and lets no other start: called when kapply exits,
// so that none outlives it, whatever request was waiting for it.
func StopExecPlugins() {
	runningPlugins.mu.Lock()
	defer runningPlugins.mu.Unlock()
	runningPlugins.stopped = true
	for cmd, ownGroup := range runningPlugins.cmds {
		_ = killPlugin(cmd, ownGroup) // it may have ended meanwhile
	}
}
