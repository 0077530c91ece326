package cluster

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/rest"
)

// RawList reads one LIST response of resource in namespace (a page: opts'
// limit and continue) through lists, with opts encoded as the dynamic
// client encodes them, and decodes it (decodeList).
func RawList(ctx context.Context, lists rest.Interface, resource schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	data, err := rawList(ctx, lists, resource, namespace, opts)
	if err != nil {
		return nil, err
	}
	return decodeList(data)
}

func rawList(ctx context.Context, lists rest.Interface, resource schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]byte, error) {
	if err := validNamespace(namespace); err != nil {
		return nil, err
	}
	res := lists.Get().AbsPath(ListPath(resource, namespace)...).
		SpecificallyVersionedParams(&opts, writeParamsCodec, writeParamsVersion).
		SetHeader("Accept", "application/json").Do(ctx)
	// Error decodes the server's Status (its reason: Forbidden, Expired;
	// its message); Raw's error does not.
	if err := res.Error(); err != nil {
		return nil, err
	}
	return res.Raw()
}

// ListPath is the path of a LIST of resource in namespace (empty: all, or
// a cluster-scoped resource), as the dynamic client builds it; a create
// goes to the same path.
func ListPath(resource schema.GroupVersionResource, namespace string) []string {
	path := []string{"/api", resource.Version}
	if resource.Group != "" {
		path = []string{"/apis", resource.Group, resource.Version}
	}
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	return append(path, resource.Resource)
}

// decodeList decodes a LIST response (its metadata, with the continue
// token and resourceVersion of a page, and its items), each item as the dynamic
// client would (numbers kept as int64 where they are integers, keys case
// sensitive), with the list's apiVersion and kind given to items that lack
// them (the server leaves them out of built-in kinds' lists).
//
// Not apimachinery's list decoding, which decodes the whole response into
// maps only to throw the items away and decode them again one by one: at
// 10,000 objects that was half the CPU of reading them and a transient
// copy of every live object. Here the response is decoded once, by
// apimachinery's json, and the items taken out of it.
func decodeList(data []byte) (*unstructured.UnstructuredList, error) {
	var envelope map[string]any
	if err := utiljson.Unmarshal(data, &envelope); err != nil {
		return nil, fmt.Errorf("decoding the list: %w", err)
	}
	objs, err := listItemsOf(envelope)
	if err != nil {
		return nil, fmt.Errorf("decoding the list: %w", err)
	}
	// A kind or apiVersion that is not a string (no server sends one)
	// counts as absent.
	apiVersion, _ := envelope["apiVersion"].(string)
	kind, _ := envelope["kind"].(string)
	itemKind := strings.TrimSuffix(kind, "List")
	list := &unstructured.UnstructuredList{Object: envelope, Items: make([]unstructured.Unstructured, len(objs))}
	for i, obj := range objs {
		item := &list.Items[i]
		item.Object = obj
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(itemKind)
			item.SetAPIVersion(apiVersion)
		}
	}
	return list, nil
}

// listItemsOf takes the items out of a decoded LIST response: the elements
// of its "items" array (null: a nil map). No "items", or a null one, is no
// items; an "items" that is not an array, or an element that is not an
// object, is an error.
func listItemsOf(envelope map[string]any) ([]map[string]any, error) {
	raw := envelope["items"]
	delete(envelope, "items")
	if raw == nil {
		return nil, nil
	}
	elems, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("the list's items are a JSON %T, not an array", raw)
	}
	items := make([]map[string]any, len(elems))
	for i, elem := range elems {
		if items[i], ok = elem.(map[string]any); !ok && elem != nil {
			return nil, fmt.Errorf("item %d of the list is a JSON %T, not an object", i, elem)
		}
	}
	return items, nil
}
