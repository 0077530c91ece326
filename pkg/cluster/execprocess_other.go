//go:build !unix

package cluster

import "os/exec"

// startOwnGroup: process groups are a unix notion; the plugin alone is
// killed.
func startOwnGroup(*exec.Cmd) {}

// killPlugin kills cmd.
func killPlugin(cmd *exec.Cmd, _ bool) error {
	return cmd.Process.Kill()
}
