package fieldpath

import (
	"slices"
	"testing"
)

func TestPathEqualsAsPrinted(t *testing.T) {
	parsed, err := Parse("spec.ports[port=80,protocol=TCP].name")
	if err != nil {
		t.Fatal(err)
	}
	built := Fields("spec", "ports").
		Child(Key([]KeyValue{{"port", int64(80)}, {"protocol", "TCP"}})).Child(Field("name"))
	if !parsed.Equals(built) || built.Compare(parsed) != 0 {
		t.Errorf("%s parsed and built differ", parsed)
	}
	for _, other := range []Path{
		Fields("spec", "ports"),
		Fields("spec", "ports").Child(Key([]KeyValue{{"port", int64(81)}, {"protocol", "TCP"}})).Child(Field("name")),
		Fields("spec", "ports").Child(Value("80")).Child(Field("name")),
		Fields("spec", "ports").Child(Index(80)).Child(Field("name")),
	} {
		if parsed.Equals(other) || parsed.Compare(other) == 0 {
			t.Errorf("%s equals %s", parsed, other)
		}
		if (parsed.String() == other.String()) != parsed.Equals(other) {
			t.Errorf("%s and %s: Equals disagrees with their text", parsed, other)
		}
	}
}

func TestPathHasPrefix(t *testing.T) {
	p := Fields("metadata", "annotations", "a.b/c")
	for prefix, want := range map[string]bool{
		"metadata": true, "metadata.annotations": true, `metadata.annotations["a.b/c"]`: true,
		"meta": false, "metadata.labels": false, `metadata.annotations["a.b/c"].x`: false,
	} {
		q, err := Parse(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.HasPrefix(q); got != want {
			t.Errorf("%s has prefix %s: %v, want %v", p, q, got, want)
		}
	}
	if !p.HasPrefix(nil) {
		t.Error("the empty path is every path's prefix")
	}
}

func TestPathCompareOrders(t *testing.T) {
	want := []Path{
		Fields("metadata"),
		Fields("metadata", "labels"),
		Fields("spec"),
		Fields("spec", "containers").Child(Key([]KeyValue{{"name", "a"}})),
		Fields("spec", "containers").Child(Key([]KeyValue{{"name", "b"}})),
		Fields("spec", "containers").Child(Index(2)),
		Fields("spec", "containers").Child(Index(10)),
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, Path.Compare)
	if !slices.EqualFunc(got, want, Path.Equals) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}

func TestIsBookkeeping(t *testing.T) {
	for text, want := range map[string]bool{
		"metadata.resourceVersion":   true,
		"metadata.managedFields":     true,
		"metadata.uid":               true,
		"metadata.deletionTimestamp": false, // not asked for
		"metadata.name":              false,
		"spec.resourceVersion":       false,
		`metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`: true,
		`metadata.annotations["kapply.dev/last-applied-compact"]`:                  true,
		`metadata.annotations.other`:                                               false,
		"metadata.annotations":                                                     false,
	} {
		p, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsBookkeeping(p, EveryWrite|OnCreate); got != want {
			t.Errorf("%s: %v, want %v", text, got, want)
		}
	}
	if got := ServerMetadata(EveryWrite); !slices.Equal(got, []string{"managedFields", "resourceVersion", "generation"}) {
		t.Errorf("every write: %v", got)
	}
}
