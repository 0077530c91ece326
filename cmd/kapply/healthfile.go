package main

import (
	"fmt"
	"os"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/health"
)

// readHealthFile is --health-file's rules, compiled: the readiness of the
// kinds they name, for the gates of the run's waves and for --wait (nil
// without the flag: kstatus decides).
func readHealthFile(path string) (apply.HealthFunc, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--health-file: %w", err)
	}
	rules, err := health.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("--health-file %s: %w", path, err)
	}
	checker, err := health.Compile(rules)
	if err != nil {
		return nil, fmt.Errorf("--health-file %s: %w", path, err)
	}
	return checker.Status, nil
}
