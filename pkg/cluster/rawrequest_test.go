package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestRawListSwitch: KAPPLY_RAWLIST=off, and KAPPLY_RAWWRITE=off (the
// switch's name while it also covered creates and patches), take the Lists
// client out of a run, which then goes through the dynamic client alone;
// unset or any other value keeps it. The switch is read once per process,
// so each case runs in a child process of the test binary.
func TestRawListSwitch(t *testing.T) {
	if os.Getenv("KAPPLY_RAWLIST_CHILD") == "1" {
		fmt.Printf("lists:%t\n", RawClient(&rest.RESTClient{}) != nil)
		return
	}
	for env, want := range map[string]bool{"": true, "KAPPLY_RAWLIST=off": false, "KAPPLY_RAWWRITE=off": false, "KAPPLY_RAWLIST=on": true} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRawListSwitch$")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KAPPLY_RAW") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "KAPPLY_RAWLIST_CHILD=1", env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: %v\n%s", env, err, out)
		}
		if !strings.Contains(string(out), fmt.Sprintf("lists:%t\n", want)) {
			t.Errorf("%q: %s, want the Lists client kept: %t", env, out, want)
		}
	}
}
