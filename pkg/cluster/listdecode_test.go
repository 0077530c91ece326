package cluster

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodeList must give the items apimachinery's list decoding gives.
func TestDecodeListAgreesWithApimachinery(t *testing.T) {
	cases := map[string]string{
		"built-in list, items without kind": `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[
			{"metadata":{"name":"a","namespace":"ns","uid":"u1","annotations":{"x":"\u00e9\"q\""}},"data":{"k":"v"}},
			{"metadata":{"name":"b","namespace":"ns"},"data":null,"binaryData":{"b":"AAE="}}]}`,
		"custom resources with their kind": `{"apiVersion":"bench.kapply.io/v1","kind":"WidgetList","metadata":{},"items":[
			{"apiVersion":"bench.kapply.io/v1","kind":"Widget","metadata":{"name":"w"},
			 "spec":{"big":9007199254740993,"neg":-12,"float":1.5,"exp":1e3,"list":[1,"a",true,null,{"x":[]}]}}]}`,
		"empty":               `{"kind":"ServiceList","apiVersion":"v1","metadata":{},"items":[]}`,
		"no items":            `{"kind":"ServiceList","apiVersion":"v1","metadata":{}}`,
		"item with kind only": `{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod","metadata":{"name":"p"}}]}`,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			var want unstructured.UnstructuredList
			if err := want.UnmarshalJSON([]byte(data)); err != nil {
				t.Fatalf("apimachinery: %v", err)
			}
			list, err := decodeList([]byte(data))
			if err != nil {
				t.Fatalf("decodeList: %v", err)
			}
			got := list.Items
			if len(got) != len(want.Items) {
				t.Fatalf("%d items, apimachinery has %d", len(got), len(want.Items))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i].Object, want.Items[i].Object) {
					t.Errorf("item %d:\n got %#v\nwant %#v", i, got[i].Object, want.Items[i].Object)
				}
			}
		})
	}
}

func TestDecodeListRefusesMalformedInput(t *testing.T) {
	for _, data := range []string{``, `{`, `{"items":[{"metadata":}]}`, `{"items":{}}`, `[]`} {
		if _, err := decodeList([]byte(data)); err == nil {
			t.Errorf("decodeList(%q) = nil error", data)
		}
	}
}
