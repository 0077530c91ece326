package load

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	runtimeobj "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
)

// list turns the parsed documents of f into infos as the builder's visitors
// do (resource.Builder.Do with Flatten, a label selector and
// ContinueOnError): Lists flattened, objects the selector does not match
// left out, an empty namespace removed. It also numbers the documents
// lossError refuses. It returns a fallback reason if a document failed.
func (f *localFile) list(sel labels.Selector) string {
	n := 0
	for _, d := range f.docs {
		if d.why != "" {
			return d.why
		}
		if d.counted {
			n++
			if d.lossy != nil {
				f.lossy = append(f.lossy, lossyDocument{n: n, doc: d.data, err: lossyError(f.source, n, d.lossy)})
			}
		}
		if d.obj == nil {
			continue
		}
		infos, why := flatten(f.source, d.obj)
		if why != "" {
			return why
		}
		for _, info := range infos {
			u := info.Object.(*unstructured.Unstructured)
			if sel != nil && !sel.Matches(labels.Set(u.GetLabels())) {
				continue
			}
			if info.Namespace == "" {
				u.SetNamespace("") // resource.FilterNamespace, without a mapping
			}
			f.infos = append(f.infos, info)
			f.infoLines = append(f.infoLines, d.line)
		}
	}
	return ""
}

// flatten lists obj, or the items of the List obj is, as
// resource.FlattenListVisitor does.
func flatten(source string, obj runtimeobj.Object) ([]*resource.Info, string) {
	list, ok := obj.(*unstructured.UnstructuredList)
	if !ok {
		return []*resource.Info{infoOf(source, obj.(*unstructured.Unstructured))}, ""
	}
	resourceVersion := list.GetResourceVersion()
	infos := make([]*resource.Info, 0, len(list.Items))
	for i := range list.Items {
		item := &list.Items[i]
		if item.IsList() {
			return nil, fallbackList // meta.ExtractList: no Items field
		}
		if gvk := item.GroupVersionKind(); gvk.Kind == "" || gvk.Version == "" {
			return nil, fallbackList // the unstructured typer refuses it
		}
		info := infoOf(source, item)
		if resourceVersion != "" {
			info.ResourceVersion = resourceVersion
		}
		infos = append(infos, info)
	}
	return infos, ""
}

// infoOf is the builder's info for u, read from source in Local mode: no
// mapping, no client.
func infoOf(source string, u *unstructured.Unstructured) *resource.Info {
	return &resource.Info{
		Source:          source,
		Namespace:       u.GetNamespace(),
		Name:            u.GetName(),
		ResourceVersion: u.GetResourceVersion(),
		Object:          u,
	}
}
