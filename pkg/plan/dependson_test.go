package plan

import (
	"testing"

	"sigs.k8s.io/cli-utils/pkg/object/dependson"
)

// dependsOnInputs: every input of cli-utils' own dependson tests
// (strings_test.go and annotation_test.go at v0.37.2, copied unchanged),
// then examples from Config Sync's documentation and edge shapes.
var dependsOnInputs = []string{
	// cli-utils pkg/object/dependson/strings_test.go
	"",
	"test-group/test-namespace/test-kind/namespaced-obj",
	"test-group/namespaces/test-kind/cluster-obj",
	"test-group/test-kind/cluster-obj",
	"test-group/namespaces/test-namespace/test-kind/namespaced-obj",
	"  test-group/namespaces/test-namespace/test-kind/namespaced-obj\n",
	"test-group/namespaces/test-namespace/test-kind/namespaced-obj," +
		"test-group/test-kind/cluster-obj",
	// cli-utils pkg/object/dependson/annotation_test.go
	"test-group:namespaces:test-namespace:test-kind:namespaced-obj",
	// Config Sync documentation (declaring dependencies)
	"apps/namespaces/shipping-dev/Deployment/shipping",
	"/namespaces/shipping-dev/ConfigMap/cm",
	"apiextensions.k8s.io/CustomResourceDefinition/crontabs.stable.example.com",
	// edges
	",", "a/b/c,", ",a/b/c", "a/b/c,,a/b/c", "a/b/c, a/b/c", " a/b/c ,\tx/namespaces/n/k/m\n",
	"/", "//", "////", "/////", "a/b", "a/b/c/d", "a/b/c/d/e/f", "a/Namespaces/n/k/m",
	"a/namespaces/n/k/m/", "/namespaces//ConfigMap/", "\u00a0a/b/c\u00a0", "\u2028a/b/c",
	"a /b/ c", "a/b/c\x00", "ä/b/ç", "a/b/c,d",
}

// TestParseDependsOnMatchesCliUtils: ParseDependsOn accepts and refuses
// what cli-utils' ParseDependencySet does, and reads the same references.
func TestParseDependsOnMatchesCliUtils(t *testing.T) {
	for _, in := range dependsOnInputs {
		compareDependsOn(t, in)
	}
}

func FuzzParseDependsOn(f *testing.F) {
	for _, in := range dependsOnInputs {
		f.Add(in)
	}
	f.Fuzz(compareDependsOn)
}

func compareDependsOn(t *testing.T, in string) {
	t.Helper()
	ours, err := ParseDependsOn(in)
	theirs, theirErr := dependson.ParseDependencySet(in)
	if (err == nil) != (theirErr == nil) {
		t.Fatalf("%q: ours err=%v, cli-utils err=%v", in, err, theirErr)
	}
	if err != nil {
		return
	}
	if len(ours) != len(theirs) {
		t.Fatalf("%q: ours %d refs, cli-utils %d", in, len(ours), len(theirs))
	}
	for i, r := range ours {
		o := theirs[i]
		want := DependsOnRef{Group: o.GroupKind.Group, Kind: o.GroupKind.Kind, Namespace: o.Namespace, Name: o.Name}
		if r != want {
			t.Fatalf("%q ref %d: ours %+v, cli-utils %+v", in, i, r, want)
		}
		if o.Name != "" && o.GroupKind.Kind != "" {
			if s, ferr := dependson.FormatObjMetadata(o); ferr != nil || s != r.String() {
				t.Fatalf("%q ref %d: String %q, cli-utils formats %q (%v)", in, i, r.String(), s, ferr)
			}
		}
	}
}
