package fieldpath

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/json"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Path
		out  string
	}{
		{"spec.replicas", Path{Field("spec"), Field("replicas")}, "spec.replicas"},
		{"spec.template.spec.containers[name=web].resources",
			Path{Field("spec"), Field("template"), Field("spec"), Field("containers"), Key([]KeyValue{{"name", "web"}}), Field("resources")},
			"spec.template.spec.containers[name=web].resources"},
		{"spec.ports[port=80,protocol=TCP]", Path{Field("spec"), Field("ports"), Key([]KeyValue{{"port", "80"}, {"protocol", "TCP"}})}, ""},
		{`metadata.labels["app.kubernetes.io/name"]`, Path{Field("metadata"), Field("labels"), Field("app.kubernetes.io/name")}, ""},
		{`metadata.labels.["app.kubernetes.io/name"]`, Path{Field("metadata"), Field("labels"), Field("app.kubernetes.io/name")}, `metadata.labels["app.kubernetes.io/name"]`},
		{`spec.containers[name="a,b]"].image`, Path{Field("spec"), Field("containers"), Key([]KeyValue{{"name", "a,b]"}}), Field("image")}, ""},
		{"metadata.finalizers[=example.com/cleanup]", Path{Field("metadata"), Field("finalizers"), Value("example.com/cleanup")}, ""},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.in, got, tc.want)
		}
		out := tc.out
		if out == "" {
			out = tc.in
		}
		if got.String() != out {
			t.Errorf("%s: prints %q, want %q", tc.in, got.String(), out)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "empty path",
		"spec..replicas":           "offset 5: empty field name",
		"spec.replicas.":           "path ends with a dot",
		"[name=web]":               "starts with a field name",
		"spec.containers[0]":       "not by position",
		"spec.containers[name]":    `expected = after key "name"`,
		"spec.containers[name=]":   "empty value",
		"spec.containers[name=web": "expected ] to close",
		`metadata.labels["a`:       "unterminated quoted string",
		"spec.a b":                 `expected . or [ after a step, found ' '`,
		"spec.containers[=]":       "empty value",
	} {
		_, err := Parse(in)
		var pe *Error
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

const releaseRecord = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"a.b/c":"x"}},
"spec":{"replicas":2,"template":{"spec":{"containers":[
 {"name":"web","image":"nginx","resources":{"limits":{"cpu":"1"}},"ports":[{"containerPort":80}]},
 {"name":"side","image":"busybox"}]}}}}`

func TestPathRemove(t *testing.T) {
	for _, tc := range []struct {
		path, want string
	}{
		{"spec.replicas", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"a.b/c":"x"},"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"nginx","name":"web","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}},{"image":"busybox","name":"side"}]}}}}`},
		{"spec.template.spec.containers[name=web].resources.limits.cpu", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"a.b/c":"x"},"name":"web"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx","name":"web","ports":[{"containerPort":80}]},{"image":"busybox","name":"side"}]}}}}`},
		{"spec.template.spec.containers[name=web].ports[containerPort=80]", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"a.b/c":"x"},"name":"web"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx","name":"web","resources":{"limits":{"cpu":"1"}}},{"image":"busybox","name":"side"}]}}}}`},
		{`metadata.labels["a.b/c"]`, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx","name":"web","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}},{"image":"busybox","name":"side"}]}}}}`},
	} {
		record := map[string]any{}
		if err := json.Unmarshal([]byte(releaseRecord), &record); err != nil {
			t.Fatal(err)
		}
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Remove(record); err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		got, err := json.Marshal(record)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.path, got, tc.want)
		}
	}
}

func TestPathRemoveMissing(t *testing.T) {
	for path, want := range map[string]string{
		"spec.paused": "spec.paused: field not found",
		"spec.template.spec.containers[name=db].image":         "containers[name=db]: no list element matches",
		"spec.template.spec.containers.image":                  "select an element with [key=value]",
		"spec.replicas.value":                                  "the parent is not an object",
		"spec.template.spec.containers[image=nginx,name=side]": "no list element matches",
	} {
		record := map[string]any{}
		if err := json.Unmarshal([]byte(releaseRecord), &record); err != nil {
			t.Fatal(err)
		}
		p, err := Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Remove(record)
		if !errors.Is(err, ErrFieldNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
}

func TestPathMarshalsAsText(t *testing.T) {
	p := Fields("metadata", "labels", "app.kubernetes.io/name")
	keyed := Fields("spec", "ports").Child(KeyOf(map[string]any{"port": int64(80), "protocol": "TCP", "name": "web"}, []string{"port", "protocol"}))
	out, err := json.Marshal(map[string]Path{"a": p, "b": keyed, "c": nil})
	want := `{"a":"metadata.labels[\"app.kubernetes.io/name\"]","b":"spec.ports[port=80,protocol=TCP]","c":""}`
	if err != nil || string(out) != want {
		t.Errorf("got %s, %v; want %s", out, err, want)
	}
}
