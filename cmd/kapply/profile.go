package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// Environment variables naming profile files, for performance work
// (hack/bench, issue 13): not flags, so that no command's help or kubectl
// parity changes for a developer's tool.
const (
	cpuProfileEnv = "KAPPLY_CPUPROFILE"
	memProfileEnv = "KAPPLY_MEMPROFILE"
	// traceEnv names a runtime/trace file: when each phase runs, on which
	// core, and what waits (go tool trace).
	traceEnv = "KAPPLY_TRACE"
)

// startProfiles starts the CPU profile when asked for and returns the
// function that ends it and writes the heap profile; a profile that cannot
// be written is reported on stderr and never changes the outcome.
func startProfiles(stderr io.Writer) (stop func()) {
	var cpu *os.File
	if path := os.Getenv(cpuProfileEnv); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "Warning: no CPU profile: %v\n", err)
		} else {
			cpu = f
		}
	}
	var traced *os.File
	if path := os.Getenv(traceEnv); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "Warning: no trace: %v\n", err)
		} else {
			traced = f
		}
	}
	return func() {
		if traced != nil {
			trace.Stop()
			traced.Close()
		}
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if path := os.Getenv(memProfileEnv); path != "" {
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(stderr, "Warning: no heap profile: %v\n", err)
			}
		}
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// No GC first: the in-use figures are those of the last cycle, near
	// the peak, instead of the nothing left at exit.
	return pprof.Lookup("allocs").WriteTo(f, 0)
}
