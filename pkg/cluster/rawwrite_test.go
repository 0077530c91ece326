package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestDecodeWrittenIsTheDynamicClients: for every kind of answer to a
// write — an object, one without apiVersion, a non-JSON content type, an
// apiVersion that is not a string, a Status, no kind, an empty body, not
// JSON, a server error — decodeWritten gives what the dynamic client gives.
func TestDecodeWrittenIsTheDynamicClients(t *testing.T) {
	answers := map[string]struct {
		status      int
		contentType string
		body        string
	}{
		"object":            {200, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","n":1},"data":{"k":"v"}}`},
		"no apiVersion":     {200, "application/json", `{"kind":"ConfigMap","metadata":{"name":"a"}}`},
		"charset":           {200, "application/json; charset=utf-8", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
		"text/plain":        {200, "text/plain", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
		"apiVersion number": {200, "application/json", `{"apiVersion":5,"kind":"ConfigMap","metadata":{"name":"a"}}`},
		"success Status":    {200, "application/json", `{"apiVersion":"v1","kind":"Status","status":"Success"}`},
		"failure Status":    {200, "application/json", `{"apiVersion":"v1","kind":"Status","status":"Failure","message":"no","reason":"Conflict","code":409}`},
		"no kind":           {200, "application/json", `{"apiVersion":"v1","metadata":{"name":"a"}}`},
		"empty":             {200, "application/json", ``},
		"not JSON":          {200, "application/json", `{"apiVersion":`},
		"server error":      {422, "application/json", `{"apiVersion":"v1","kind":"Status","status":"Failure","message":"invalid","reason":"Invalid","code":422}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a := answers[req.URL.Query().Get("fieldManager")]
		w.Header().Set("Content-Type", a.contentType)
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	listsCfg := dynamic.ConfigFor(cfg)
	listsCfg.GroupVersion, listsCfg.APIPath = nil, "/x"
	lists, err := rest.UnversionedRESTClientFor(listsCfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := k8sschema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ctx := context.Background()
	for name := range answers {
		opts := metav1.PatchOptions{FieldManager: name}
		want, wantErr := dyn.Resource(gvr).Namespace("ns").Patch(ctx, "a", types.MergePatchType, []byte(`{}`), opts)
		got, gotErr := decodeWritten(lists.Patch(types.MergePatchType).
			AbsPath("/api/v1/namespaces/ns/configmaps/a").Body([]byte(`{}`)).
			SpecificallyVersionedParams(&opts, writeParamsCodec, writeParamsVersion).Do(ctx))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: error %v, the dynamic client's %v", name, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, the dynamic client's %v", name, got, want)
		}
	}
}
