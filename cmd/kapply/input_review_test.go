package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestApplyStdinNamedTwice: -f - -f /dev/stdin name one pipe twice; apply
// reads them one after the other, as kubectl does: stdin gets every
// document, whole, /dev/stdin nothing; all applied, exit 0. The two were
// read at once, each getting pieces of the documents ("error parsing
// /dev/stdin", exit 1), when the writer wrote more than a pipe holds.
func TestApplyStdinNamedTwice(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	var docs strings.Builder
	for i := range 4 {
		fmt.Fprintf(&docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: piece-%d}\ndata:\n", i)
		for j := range 20 {
			fmt.Fprintf(&docs, "  k%d: %s\n", j, strings.Repeat("x", 10000))
		}
		docs.WriteString("---\n")
	}
	stdin, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd := exec.Command(builtKapply(t), "apply", "-f", "-", "-f", "/dev/stdin", "-n", ns, "-o", "name", "--kubeconfig", cluster.Kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// In pieces, a little apart: both reads see bytes come.
	s := docs.String()
	for i := 0; i < len(s); i += 7000 {
		if _, err := writer.WriteString(s[i:min(i+7000, len(s))]); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	writer.Close()
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	want := "configmap/piece-0\nconfigmap/piece-1\nconfigmap/piece-2\nconfigmap/piece-3\n"
	if err != nil || stdout.String() != want {
		t.Fatalf("%v\nstdout %q\nstderr %.400s\nwant %q, exit 0", err, stdout.String(), stderr.String(), want)
	}
}
