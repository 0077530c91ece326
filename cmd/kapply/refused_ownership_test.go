package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOwnershipCommandsRefusedServer: the ownership commands, whose first
// request is the resource builder's discovery, answer a refused server with
// kubectl's sentence at once too: exit 1 as kubectl apply
// view-last-applied, except status, whose 1 means drift (2, as diff).
func TestOwnershipCommandsRefusedServer(t *testing.T) {
	server := refusedServer(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	file := dir + "/cm.yaml"
	want := fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", strings.TrimPrefix(server, "http://"))
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"adopt", "-f", file}, 1},
		{[]string{"release", "-f", file, "--field", "data.a"}, 1},
		{[]string{"last-applied", "view", "-f", file}, 1},
		{[]string{"last-applied", "set", "-f", file}, 1},
		{[]string{"export", "configmap/cm"}, 1},
		{[]string{"status", "-f", file}, 2},
	} {
		start := time.Now()
		r := runAlone(t, "kapply", server, c.args...)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%v took %s", c.args, took)
		}
		if r.code != c.code || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "error: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and kubectl's sentence", c.args, r.code, r.stderr, c.code)
		}
	}
}
