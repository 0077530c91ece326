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
	stopCPU := startRecording(stderr, cpuProfileEnv, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := startRecording(stderr, traceEnv, "trace", trace.Start, trace.Stop)
	return func() {
		stopTrace()
		stopCPU()
		if path := os.Getenv(memProfileEnv); path != "" {
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(stderr, "Warning: no heap profile: %v\n", err)
			}
		}
	}
}

// startRecording starts a recording (CPU profile, trace) into the file the
// environment variable env names, if any, and returns what ends it.
func startRecording(stderr io.Writer, env, what string, start func(io.Writer) error, end func()) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "Warning: no %s: %v\n", what, err)
		return func() {}
	}
	return func() {
		end()
		f.Close()
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
