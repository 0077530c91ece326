package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fleetConfig is a kubeconfig being built: contexts on the three servers,
// each with its own namespace, and contexts that fail on purpose.
type fleetConfig struct {
	cfg *clientcmdapi.Config
	// server is the index in servers of each good context's server.
	server map[string]int
	// namespace is each context's namespace.
	namespace map[string]string
}

func newFleetConfig(t *testing.T) *fleetConfig {
	t.Helper()
	f := &fleetConfig{cfg: clientcmdapi.NewConfig(), server: map[string]int{}, namespace: map[string]string{}}
	for i, s := range servers {
		// The servers' clusters and users, not contexts: every context
		// of the tests has its own namespace.
		name := fmt.Sprintf("server%d", i)
		f.merge(t, name, s.Kubeconfig)
		delete(f.cfg.Contexts, name)
	}
	return f
}

// merge adds the current context of the kubeconfig at path under name
// (its cluster and user too), without a namespace.
func (f *fleetConfig) merge(t *testing.T, name, path string) {
	t.Helper()
	from, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := from.Contexts[from.CurrentContext]
	f.cfg.Clusters[name] = from.Clusters[ctx.Cluster]
	f.cfg.AuthInfos[name] = from.AuthInfos[ctx.AuthInfo]
	f.cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
}

// add adds a context on servers[server] with a new namespace.
func (f *fleetConfig) add(t *testing.T, name string, server int) {
	t.Helper()
	ns := servers[server].Namespace(t)
	base := fmt.Sprintf("server%d", server)
	f.cfg.Contexts[name] = &clientcmdapi.Context{Cluster: base, AuthInfo: base, Namespace: ns}
	f.server[name], f.namespace[name] = server, ns
}

// addURL adds a context whose server is url, with no credentials.
func (f *fleetConfig) addURL(name, url string) {
	f.cfg.Clusters[name] = &clientcmdapi.Cluster{Server: url, InsecureSkipTLSVerify: true}
	f.cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "none"}
	f.cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
}

func (f *fleetConfig) write(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*f.cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// silentServer accepts connections and never answers (a hung server).
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(done)
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		<-done
		for _, c := range conns {
			if err := c.Close(); err != nil {
				t.Log(err)
			}
		}
	})
	return l.Addr().String()
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// kapply runs the binary with args against kubeconfig.
func kapply(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	cmd := kapplyCommand(t, kubeconfig, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	return finish(t, cmd, start, &out, &errOut)
}

func kapplyCommand(t *testing.T, kubeconfig string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	args = append(args, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir())
	return exec.CommandContext(ctx, kapplyBin, args...)
}

func finish(t *testing.T, cmd *exec.Cmd, start time.Time, out, errOut *bytes.Buffer) result {
	t.Helper()
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running kapply: %v", err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code, took: time.Since(start)}
}

// row is one context's row of the matrix.
type row struct {
	wave, created, configured, unchanged, pruned, deleted, failed, ready, firstError string
}

var rowPattern = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*)$`)

// matrix reads the matrix from stderr, by context.
func matrix(t *testing.T, stderr string) map[string]row {
	t.Helper()
	rows := map[string]row{}
	_, table, ok := strings.Cut(stderr, "\nCONTEXT ")
	if !ok {
		t.Fatalf("no matrix in:\n%s", stderr)
	}
	for _, line := range strings.Split(table, "\n")[1:] {
		m := rowPattern.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows[m[1]] = row{m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[11]}
	}
	return rows
}

// configMaps is a file of n ConfigMaps.
func configMaps(t *testing.T, n int, value string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%03d\ndata:\n  k: %q\n", i, value)
	}
	path := filepath.Join(t.TempDir(), "objects.yaml")
	writeFile(t, path, b.String())
	return path
}

// countConfigMaps counts the ConfigMaps named cm-* in a context's
// namespace.
func (f *fleetConfig) countConfigMaps(t *testing.T, name string) int {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(servers[f.server[name]].Config)
	list, err := client.CoreV1().ConfigMaps(f.namespace[name]).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "cm-") {
			n++
		}
	}
	return n
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
