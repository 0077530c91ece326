package apply

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkObject refuses an object the library cannot copy or encode: a nil
// one, or one whose map holds a value of a type unstructured objects do
// not hold (a program's "replicas": 3 is a Go int, not int64). Each of
// those panicked in a worker goroutine (apimachinery's DeepCopyJSONValue
// panics on it), which no caller can recover: the process died.
func checkObject(what string, u *unstructured.Unstructured) error {
	if u == nil {
		return fmt.Errorf("%s is nil: give an object with apiVersion, kind and metadata.name", what)
	}
	if path, v, ok := foreignValue(u.Object, ""); ok {
		return fmt.Errorf("%s holds a %T at %s: objects hold only string, int64, float64, bool, nil, map[string]any and []any (convert with runtime.DefaultUnstructuredConverter)", what, v, path)
	}
	return nil
}

// foreignValue finds in v the first value that is not of a JSON type as
// unstructured objects hold them, with its path.
func foreignValue(v any, path string) (string, any, bool) {
	switch v := v.(type) {
	case nil, string, int64, float64, bool:
		return "", nil, false
	case map[string]any:
		for k, item := range v {
			if p, bad, ok := foreignValue(item, path+"."+k); ok {
				return p, bad, true
			}
		}
		return "", nil, false
	case []any:
		for i, item := range v {
			if p, bad, ok := foreignValue(item, path+"["+strconv.Itoa(i)+"]"); ok {
				return p, bad, true
			}
		}
		return "", nil, false
	}
	if path == "" {
		path = "."
	}
	return path, v, true
}
