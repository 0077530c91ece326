package modroot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvOrBelow is the folder $env names when it is set, otherwise elem
// joined below the module root.
func EnvOrBelow(env string, elem ...string) (string, error) {
	if dir := os.Getenv(env); dir != "" {
		return dir, nil
	}
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{root}, elem...)...), nil
}

// Root walks up from the working directory to the folder with go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}
