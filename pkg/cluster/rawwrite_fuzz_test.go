package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
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

// FuzzDecodeWritten: for any answer body to a write, decodeWritten gives
// the dynamic client's object and error. Fuzz with
// KAPPLY_K8S_BIN=/none go test -short -run '^$' -fuzz FuzzDecodeWritten ./pkg/apply
func FuzzDecodeWritten(f *testing.F) {
	for _, body := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","n":1},"data":{"k":"v"}}`,
		`{"kind":"ConfigMap","metadata":{"name":"a"}}`, `{"apiVersion":5,"kind":"ConfigMap"}`,
		`{"apiVersion":"v1","kind":"Status","status":"Failure","message":"no","reason":"Conflict","code":409}`,
		`{"apiVersion":"v1","metadata":{"name":"a"}}`, ``, `{"apiVersion":`, `[]`, `null`,
	} {
		f.Add([]byte(body), true)
	}
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap"}`), false)
	var answer struct {
		body []byte
		json bool
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", map[bool]string{true: "application/json", false: "text/plain"}[answer.json])
		w.Write(answer.body)
	}))
	f.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, QPS: -1} // no client-side rate limit

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		f.Fatal(err)
	}
	listsCfg := dynamic.ConfigFor(cfg)
	listsCfg.GroupVersion, listsCfg.APIPath = nil, "/x"
	lists, err := rest.UnversionedRESTClientFor(listsCfg)
	if err != nil {
		f.Fatal(err)
	}
	gvr := k8sschema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	f.Fuzz(func(t *testing.T, body []byte, json bool) {
		answer.body, answer.json = body, json // the fuzz function runs one input at a time
		ctx, opts := context.Background(), metav1.PatchOptions{}
		want, wantErr := dyn.Resource(gvr).Namespace("ns").Patch(ctx, "a", types.MergePatchType, []byte(`{}`), opts)
		got, gotErr := decodeWritten(lists.Patch(types.MergePatchType).
			AbsPath("/api/v1/namespaces/ns/configmaps/a").Body([]byte(`{}`)).
			SpecificallyVersionedParams(&opts, writeParamsCodec, writeParamsVersion).Do(ctx))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: error %v, the dynamic client's %v", body, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %v, the dynamic client's %v", body, got, want)
		}
	})
}
