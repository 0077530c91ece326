package jsonmap

import (
	"fmt"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// listDisagreement compares List with apimachinery's decoding of the
// whole response, split by hand.
func listDisagreement(data []byte) error {
	envelope, items, err := List(data)
	whole := map[string]any{}
	if wantErr := utiljson.Unmarshal(data, &whole); wantErr != nil || err != nil {
		return fmt.Errorf("List: %v; apimachinery: %v", err, wantErr)
	}
	want, _ := whole["items"].([]any)
	if len(items) != len(want) {
		return fmt.Errorf("%d items, apimachinery has %d", len(items), len(want))
	}
	for i, item := range items {
		if !same(item, want[i]) && !(item == nil && want[i] == nil) {
			return fmt.Errorf("item %d:\n %#v\napimachinery gives\n %#v", i, item, want[i])
		}
	}
	if whole != nil {
		delete(whole, "items")
	}
	if !same(envelope, whole) {
		return fmt.Errorf("envelope:\n %#v\napimachinery gives\n %#v", envelope, whole)
	}
	return nil
}

func TestList(t *testing.T) {
	for _, data := range []string{
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}},{"data":{"k":1}}]}`,
		`{"kind":"ServiceList","items":[]}`,
		`{"kind":"ServiceList","items":null}`,
		`{"kind":"ServiceList"}`,
		`{"items":[null,{}]}`,
		`{"items":[{"a":1}],"items":[{"b":2}]}`,
		`{}`,
	} {
		if err := listDisagreement([]byte(data)); err != nil {
			t.Errorf("%s: %v", data, err)
		}
	}
	for _, data := range []string{``, `[]`, `{"items":{}}`, `{"items":"x"}`, `{"items":[1]}`, `{"items":[[]]}`, `{"items":[{}`} {
		if _, _, err := List([]byte(data)); err == nil {
			t.Errorf("List(%s) = nil error", data)
		}
	}
	if envelope, items, err := List([]byte(`null`)); envelope != nil || items != nil || err != nil {
		t.Errorf("List(null) = %v, %v, %v; want nothing", envelope, items, err)
	}
}
