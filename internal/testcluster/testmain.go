package testcluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Main runs a test binary's tests against one cluster started for the whole
// binary, and stops it afterwards. Use it from TestMain:
//
//	var cluster *testcluster.Cluster
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }
//
// With -short and no binaries built, the cluster is left nil, tests that
// call Require are skipped and examples are not run; without -short,
// missing binaries fail the run.
func Main(m *testing.M, cluster **Cluster) int {
	if !flag.Parsed() {
		flag.Parse() // testing.Short needs the flags; m.Run would parse them later
	}
	c, err := Start("")
	switch {
	case errors.Is(err, ErrNoBinaries) && testing.Short():
		fmt.Fprintln(os.Stderr, "testcluster:", err, "- integration tests skipped (-short)")
		// Examples apply to the cluster and cannot skip themselves.
		if err := flag.Set("test.skip", "^Example"); err != nil {
			fmt.Fprintln(os.Stderr, "testcluster:", err)
		}
		return m.Run()
	case err != nil:
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testcluster:", err)
		}
		if err := os.Remove(c.Kubeconfig); err != nil {
			fmt.Fprintln(os.Stderr, "testcluster:", err)
		}
	}()
	*cluster = c
	return m.Run()
}

// Require skips the test when no cluster runs (only possible with -short).
func Require(t testing.TB, c *Cluster) {
	t.Helper()
	if c == nil {
		t.Skip("no local cluster: run `make k8s-bin` (integration test skipped with -short)")
	}
}

var namespaceSeq atomic.Int64

// Namespace creates a fresh namespace for one test. Namespaces are not
// deleted afterwards: without a controller manager they would stay
// Terminating, and the whole cluster goes away with the test binary.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	name := fmt.Sprintf("t%d-%s", namespaceSeq.Add(1), dnsLabel(t.Name()))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// dnsLabel turns a test name into a short lowercase DNS label.
func dnsLabel(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 50 {
		out = strings.Trim(out[:50], "-")
	}
	return out
}
