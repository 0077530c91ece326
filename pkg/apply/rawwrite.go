package apply

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/internal/offswitch"
)

// The writes of an apply — a POST or a PATCH per object — go, when the
// Lists client is set, through it rather than the dynamic client: the same
// request (path, body, query, headers, transport), with the answer decoded
// once, by apimachinery's json into a map. The dynamic client decodes each
// answer twice over (its kind and version first, then the whole object
// through encoding/json and a conversion): at 10,000 objects that was 1.2
// of 7.5 CPU seconds of an update. The request body of a create is
// encoding/json's, as the unstructured scheme writes it.

// rawWriteOn is false under KAPPLY_RAWWRITE=off: every LIST, create and
// patch then goes through the dynamic client.
var rawWriteOn = !offswitch.Off("KAPPLY_RAWWRITE")

// rawClient is the Lists client a run uses: none when switched off.
func rawClient(lists rest.Interface) rest.Interface {
	if !rawWriteOn {
		return nil
	}
	return lists
}

// writeParams encodes the options of a write as the dynamic client does
// (its parameter scheme: the meta/v1 options under version v1).
var (
	writeParams        = runtime.NewScheme()
	writeParamsCodec   = runtime.NewParameterCodec(writeParams)
	writeParamsVersion = k8sschema.GroupVersion{Version: "v1"}
)

func init() {
	metav1.AddToGroupVersion(writeParams, writeParamsVersion)
}

// sendPatch is client.Patch of o (client is r.resource(o)).
func (r *runner) sendPatch(ctx context.Context, client dynamic.ResourceInterface, o *object, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	if r.lists == nil {
		return client.Patch(ctx, o.Obj.GetName(), pt, data, opts)
	}
	if err := validPath(o, true); err != nil {
		return nil, err
	}
	return decodeWritten(r.lists.Patch(pt).
		AbsPath(objectPath(o)...).
		Body(data).
		SpecificallyVersionedParams(&opts, writeParamsCodec, writeParamsVersion).
		Do(ctx))
}

// sendCreate is client.Create of body, the object o with its record.
func (r *runner) sendCreate(ctx context.Context, client dynamic.ResourceInterface, o *object, body *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(body.Object)
	if r.lists == nil || err != nil {
		return client.Create(ctx, body, opts) // the client's error, if any
	}
	if err := validPath(o, false); err != nil {
		return nil, err
	}
	return decodeWritten(r.lists.Post().
		AbsPath(collectionPath(o)...).
		SetHeader("Content-Type", "application/json").
		Body(append(data, '\n')). // as the unstructured scheme writes it
		SpecificallyVersionedParams(&opts, writeParamsCodec, writeParamsVersion).
		Do(ctx))
}

// sendDelete is client.Delete of o, returning the UID of the object the
// server deleted ("" when unknown: without the raw client, whose answer
// the dynamic client drops). A deletion wait follows that UID, as
// kubectl's does: an object a controller creates again under the name
// before the wait first lists is another object.
func (r *runner) sendDelete(ctx context.Context, client dynamic.ResourceInterface, o *object, opts metav1.DeleteOptions) (types.UID, error) {
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"} // as the dynamic client sends them
	body, err := json.Marshal(&opts)
	if r.lists == nil || err != nil {
		return "", client.Delete(ctx, o.Obj.GetName(), opts)
	}
	if err := validPath(o, true); err != nil {
		return "", err
	}
	res := r.lists.Delete().AbsPath(objectPath(o)...).SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
	if err := res.Error(); err != nil {
		return "", err
	}
	// The answer is the object (still there: finalizers, a foreground
	// deletion) or a Status whose details name the UID deleted.
	var answer struct {
		Metadata struct{ UID types.UID } `json:"metadata"`
		Details  struct{ UID types.UID } `json:"details"`
	}
	raw, err := res.Raw()
	if err != nil || json.Unmarshal(raw, &answer) != nil {
		return "", nil // deleted; the UID is only a help to the wait
	}
	return cmp.Or(answer.Metadata.UID, answer.Details.UID), nil
}

// decodeWritten is what the dynamic client makes of the answer to a write:
// its error, or the object. An answer that does not decode to an object
// (no kind, a Status, not JSON) is left to the client's own decoder, which
// gives the dynamic client's error or result.
func decodeWritten(res rest.Result) (*unstructured.Unstructured, error) {
	if err := res.Error(); err != nil {
		return nil, err
	}
	var contentType string
	res.ContentType(&contentType)
	if body, _ := res.Raw(); len(body) > 0 && isJSON(contentType) {
		var obj map[string]any
		if err := utiljson.Unmarshal(body, &obj); err == nil && isObject(obj) {
			return &unstructured.Unstructured{Object: obj}, nil
		}
	}
	var out unstructured.Unstructured
	if err := res.Into(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// validPath refuses, as the dynamic client does and in its words, a
// namespace (and a name, withName) that cannot be a path segment: the
// request path is cleaned, so "../x" would name another resource.
func validPath(o *object, withName bool) error {
	if namespaced(o) {
		if err := validNamespace(o.Obj.GetNamespace()); err != nil {
			return err
		}
	}
	if msgs := rest.IsValidPathSegmentName(o.Obj.GetName()); withName && len(msgs) != 0 {
		return fmt.Errorf("invalid resource name %q: %v", o.Obj.GetName(), msgs)
	}
	return nil
}

func validNamespace(namespace string) error {
	if msgs := rest.IsValidPathSegmentName(namespace); len(msgs) != 0 {
		return fmt.Errorf("invalid namespace %q: %v", namespace, msgs)
	}
	return nil
}

// isJSON tells a JSON answer, the one kind the dynamic client decodes.
func isJSON(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// isObject tells an answer the dynamic client takes for an object: a kind
// that is not Status, an apiVersion that is a string if any. A key that
// differs from "kind" or "apiVersion" only in case (which the client's
// first, case-insensitive decoding reads too) leaves the answer to it.
func isObject(obj map[string]any) bool {
	for k := range obj {
		if k != "kind" && k != "apiVersion" && (strings.EqualFold(k, "kind") || strings.EqualFold(k, "apiVersion")) {
			return false
		}
	}
	kind, _ := obj["kind"].(string)
	_, isString := obj["apiVersion"].(string)
	return kind != "" && kind != "Status" && (isString || obj["apiVersion"] == nil)
}

// collectionPath is the path of o's resource, in its namespace when it has
// one: where the dynamic client of r.resource(o) sends a create.
func collectionPath(o *object) []string {
	namespace := ""
	if namespaced(o) {
		namespace = o.Obj.GetNamespace()
	}
	return listPath(listKey{resource: o.Mapping.Resource, namespace: namespace})
}

// objectPath is the path of o itself.
func objectPath(o *object) []string {
	return append(collectionPath(o), o.Obj.GetName())
}
