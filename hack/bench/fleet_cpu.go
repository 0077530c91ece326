package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// every Linux the benchmark runs on).
const clockTicks = 100

// serverCPU is the user+system time so far of the API servers and etcds
// this program started (its children named kube-apiserver or etcd): the
// server work a fleet run causes, which the commands' own CPU time leaves
// out.
func serverCPU() (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("reading the servers' CPU time: %w (-fleet needs Linux)", err)
	}
	self := os.Getpid()
	var ticks int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		comm, fields, ok := splitStat(stat)
		if !ok || (comm != "kube-apiserver" && comm != "etcd") || fields[1] != strconv.Itoa(self) {
			continue
		}
		// Fields after the command: state ppid ... utime (12th) stime (13th).
		for _, f := range fields[11:13] {
			t, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading /proc/%s/stat: %w", e.Name(), err)
			}
			ticks += t
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// splitStat splits /proc/PID/stat into the command and the fields after
// it; the command is in parentheses and may hold spaces.
func splitStat(stat []byte) (string, []string, bool) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	fields := strings.Fields(string(stat[end+1:]))
	return string(stat[open+1 : end]), fields, len(fields) > 13
}
