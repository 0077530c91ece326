package main

import "testing"

func TestSoftLimitStaysInTheContainer(t *testing.T) {
	for _, c := range []struct {
		file string
		want int64
	}{
		{"max\n", softMemoryLimit},
		{"9223372036854771712\n", softMemoryLimit}, // cgroup v1: no limit
		{"", softMemoryLimit},
		{"garbage", softMemoryLimit},
		{"1073741824\n", softMemoryLimit}, // 1 GiB: the limit fits
		{"268435456\n", 201326592},        // 256 MiB: 192 MiB
		{"134217728", 100663296},          // 128 MiB: 96 MiB
		{"-1", softMemoryLimit},
	} {
		if got := softLimit(parseMemoryLimit(c.file)); got != c.want {
			t.Errorf("memory limit %q: soft limit %d, want %d", c.file, got, c.want)
		}
	}
}
