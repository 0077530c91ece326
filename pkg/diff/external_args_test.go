package diff

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestExternalRefusesScriptArguments: an external diff setting that hands
// its program a script ("sh -c touch${IFS}FILE") is refused before anything
// runs; kubectl passes only simple flags (letters, digits, - and =) and so
// does kapply, with an error instead of kubectl's silent drop.
func TestExternalRefusesScriptArguments(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	comparisons := []Comparison{mustCompare(t, deploymentObject(t))}
	for _, program := range []string{
		"sh -c touch${IFS}" + marker,
		"sh -c 'touch " + marker + "'",
		"diff -u ; touch " + marker,
		"diff --label=$(touch${IFS}" + marker + ")",
	} {
		var out, errOut bytes.Buffer
		_, err := External(context.Background(), program, comparisons, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "is not allowed") || !strings.Contains(err.Error(), program) {
			t.Errorf("%q: error %v, want one refusing an argument and naming the setting", program, err)
		}
		if _, statErr := os.Stat(marker); !os.IsNotExist(statErr) {
			t.Fatalf("%q ran its argument: %s exists", program, marker)
		}
	}
}

// TestExternalCommandAcceptsSimpleFlags: what kubectl passes on is passed.
func TestExternalCommandAcceptsSimpleFlags(t *testing.T) {
	for in, want := range map[string][]string{
		"diff":                {"diff"},
		"colordiff -N -u":     {"colordiff", "-N", "-u"},
		"/usr/bin/diff  -U=5": {"/usr/bin/diff", "-U=5"},
		"meld --newtab":       {"meld", "--newtab"},
	} {
		got, err := ExternalCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ExternalCommand("  "); err == nil {
		t.Error("an empty program was accepted")
	}
}
