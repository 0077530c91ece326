package cluster

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzDecodeList: wherever apimachinery's list decoding takes a LIST
// response, decodeList gives its items. go test runs the seeds and
// testdata/fuzz/FuzzDecodeList; fuzz with (no test cluster per worker)
// KAPPLY_K8S_BIN=/none go test -short -run '^$' -fuzz FuzzDecodeList ./pkg/apply
func FuzzDecodeList(f *testing.F) {
	for _, data := range []string{
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"},"data":{"k":"v"}}]}`,
		`{"apiVersion":"x/v1","kind":"WidgetList","items":[{"apiVersion":"x/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"n":9007199254740993,"f":1.5,"l":[1,"a",true,null]}}]}`,
		`{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod","metadata":{"name":"p"}}]}`,
		`{"kind":"ServiceList","apiVersion":"v1","metadata":{}}`, `{"items":[null]}`, `null`, `{"items":"x"}`,
	} {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want unstructured.UnstructuredList
		if want.UnmarshalJSON(data) != nil {
			return
		}
		got, err := decodeList(data)
		if err != nil {
			t.Fatalf("%q: decodeList: %v; apimachinery decodes it", data, err)
		}
		if len(got.Items) != len(want.Items) {
			t.Fatalf("%q: %d items, apimachinery %d", data, len(got.Items), len(want.Items))
		}
		for i := range got.Items {
			if !reflect.DeepEqual(got.Items[i].Object, want.Items[i].Object) {
				t.Fatalf("%q: item %d:\n got %#v\nwant %#v", data, i, got.Items[i].Object, want.Items[i].Object)
			}
		}
	})
}
