package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Down kills the API server — and etcd too when withEtcd — as a crash
// would (SIGKILL: connections in flight are reset, nothing is flushed
// beyond what etcd has already written). up starts them again with the
// same flags: the same ports, certificates and etcd data, so clients keep
// their configuration and every stored object survives. up returns when
// the API server is ready.
//
// envtest cannot restart a process in place (a restarted API server gets
// new certificates), so Down kills the processes envtest started, by their
// process id, and up starts its own copies from their command lines; Stop
// stops those copies.
func (c *Cluster) Down(withEtcd bool) (up func(context.Context) error, err error) {
	names := []string{"kube-apiserver"}
	if withEtcd {
		names = append(names, "etcd")
	}
	var lines [][]string
	for _, name := range names {
		line, err := c.kill(name)
		if err != nil {
			return nil, err
		}
		lines = append(lines, line)
	}
	return func(ctx context.Context) error {
		for i := len(names) - 1; i >= 0; i-- {
			if err := c.startProcess(names[i], lines[i]); err != nil {
				return err
			}
		}
		return c.awaitReady(ctx)
	}, nil
}

// kill kills the named process and returns its command line once it is
// gone.
func (c *Cluster) kill(name string) ([]string, error) {
	if cmd, ok := c.restarted[name]; ok {
		delete(c.restarted, name)
		if err := cmd.Process.Kill(); err != nil {
			return nil, fmt.Errorf("killing %s: %w", name, err)
		}
		return cmd.Args, ignoreExit(cmd.Wait())
	}
	pid, line, err := child(name, c.owns(name))
	if err != nil {
		return nil, err
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return nil, fmt.Errorf("finding %s (pid %d): %w", name, pid, err)
	}
	if err := proc.Signal(syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("killing %s (pid %d): %w", name, pid, err)
	}
	// envtest waits for its own process; this only watches it go.
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s (pid %d) still runs 10 s after SIGKILL", name, pid)
		}
	}
	return line, nil
}

// ignoreExit drops the error of a process that exited because it was
// killed: that was the point.
func ignoreExit(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil
	}
	return err
}

func (c *Cluster) startProcess(name string, line []string) error {
	cmd := exec.Command(line[0], line[1:]...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s again: %w", name, err)
	}
	if c.restarted == nil {
		c.restarted = map[string]*exec.Cmd{}
	}
	c.restarted[name] = cmd
	return nil
}

func (c *Cluster) awaitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the restarted API server: %w (last: %w)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopRestarted stops the copies Restart started.
func (c *Cluster) stopRestarted() error {
	var errs []error
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if cmd, ok := c.restarted[name]; ok {
			errs = append(errs, stopCmd(cmd))
			delete(c.restarted, name)
		}
	}
	return errors.Join(errs...)
}

func stopCmd(cmd *exec.Cmd) error {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return ignoreExit(err)
	case <-time.After(10 * time.Second):
		return errors.Join(fmt.Errorf("%s did not stop within 10 s", cmd.Path), cmd.Process.Kill())
	}
}

// owns tells, from its command line, whether a process running the named
// program is this cluster's: a test binary may run several clusters. The
// API server is told by its port, etcd by its client URL (the API
// server's --etcd-servers).
func (c *Cluster) owns(name string) func(line []string) bool {
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		return func([]string) bool { return false }
	}
	apiServer := "--secure-port=" + u.Port()
	etcdURL := ""
	if etcd := c.env.ControlPlane.Etcd; etcd != nil && etcd.URL != nil {
		etcdURL = "--listen-client-urls=" + etcd.URL.String()
	}
	return func(line []string) bool {
		for _, arg := range line {
			if (name == "kube-apiserver" && arg == apiServer) || (name == "etcd" && arg == etcdURL) {
				return true
			}
		}
		return false
	}
}

// child finds the process of this test binary running the named program
// that belongs says is the cluster's, and its command line.
func child(name string, belongs func(line []string) bool) (int, []string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, fmt.Errorf("finding %s: %w (restarts need Linux)", name, err)
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if parent(stat) != self {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		line := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(line[0]) == name && belongs(line) {
			return pid, line, nil
		}
	}
	return 0, nil, fmt.Errorf("no %s process started by this test binary", name)
}

// parent reads the parent pid from /proc/PID/stat: "pid (comm) state ppid".
func parent(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0
	}
	return ppid
}

// alive reports whether pid still runs (a zombie counts as gone).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && len(stat) > i+2 && stat[i+2] != 'Z'
}
