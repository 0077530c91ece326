// Command kubectl_complete-kapply completes `kubectl kapply ...` in a
// shell: kubectl (1.26 and later) runs kubectl_complete-<plugin>, found on
// PATH, with the words typed after the plugin's name, and reads cobra's
// completion output from it. It hands them to kapply's own `__complete`,
// as the completion scripts of krew plugins do, so that the completions are
// kapply's, with their values from the kubeconfig and the server.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// plugins are the names kapply is found by, beside this program first:
// kubectl-kapply as krew installs it, then kapply.
var plugins = []string{"kubectl-kapply", "kapply"}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	kapply, err := findKapply()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubectl_complete-kapply: %v\n", err)
		return 1
	}
	cmd := exec.Command(kapply, append([]string{"__complete"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var exit *exec.ExitError
	switch err := cmd.Run(); {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "kubectl_complete-kapply: %v\n", err)
		return 1
	}
	return 0
}

// findKapply is kapply beside this program, or on PATH.
func findKapply() (string, error) {
	if self, err := os.Executable(); err == nil {
		for _, name := range plugins {
			path := filepath.Join(filepath.Dir(self), name)
			if info, err := os.Stat(path); err == nil && !info.IsDir() {
				return path, nil
			}
		}
	}
	for _, name := range plugins {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("neither %s nor %s is beside it or on PATH", plugins[0], plugins[1])
}
