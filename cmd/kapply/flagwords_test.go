package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
)

// TestLibraryOptionsShowAsFlags: the library names options
// (WriteOptions.ForceConflicts); what the CLI prints names the flags, in event
// errors and warnings and in the final error, and still unwraps.
func TestLibraryOptionsShowAsFlags(t *testing.T) {
	cause := errors.New("conflict")
	err := fmt.Errorf("fields owned by other managers: set WriteOptions.ForceConflicts to take them: %w", cause)
	events := eventsWithFlagNames([]apply.Event{{Outcome: apply.Failed, Err: err, Warnings: []string{"a WriteOptions.FieldManager of your own"}}})
	if got := events[0].Err.Error(); got != "fields owned by other managers: set --force-conflicts to take them: conflict" || !errors.Is(events[0].Err, cause) {
		t.Errorf("event error %q", got)
	}
	if got := events[0].Warnings[0]; got != "a --field-manager of your own" {
		t.Errorf("warning %q", got)
	}
	var out strings.Builder
	exitCode(withCode(exitError, fmt.Errorf("You must pass 'WriteOptions.Namespace=a' to perform this operation.")), &out)
	if out.String() != "error: You must pass '--namespace=a' to perform this operation.\n" {
		t.Errorf("final error %q", out.String())
	}
}

// TestNamespaceMismatchInKubectlsWords: an object of another namespace
// than -n gets kubectl's message, flag included, from the library's.
func TestNamespaceMismatchInKubectlsWords(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: elsewhere}\n"})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	want := fmt.Sprintf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=elsewhere' to perform this operation.", "elsewhere", ns)
	if r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
}
