package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/internal/offswitch"
)

// The LISTs of a run (RawList) and its deletes (RawDelete) go, when the
// Lists client is set, through it rather than the dynamic client: the
// same request (path, query, headers, transport). A LIST's answer is
// decoded once (decodeList); a delete's answer, which the dynamic client
// drops, names the UID of the object deleted, which a deletion wait
// follows. Creates and patches go through the dynamic client: sending
// them through the Lists client too, each answer decoded once, gained
// under 15% of the wall time of an apply at 1000 objects, the bar for a
// hand-written replacement (DESIGN.md; figures in docs/benchmarks.md).

// rawListOn is false under KAPPLY_RAWLIST=off: every LIST and delete then
// goes through the dynamic client. KAPPLY_RAWWRITE=off, the switch's name
// while it also covered creates and patches, still turns it off.
var rawListOn = !offswitch.Off("KAPPLY_RAWLIST") && !offswitch.Off("KAPPLY_RAWWRITE")

// RawClient is the Lists client a run uses: none under KAPPLY_RAWLIST=off,
// when every request goes through the dynamic client.
func RawClient(lists rest.Interface) rest.Interface {
	if !rawListOn {
		return nil
	}
	return lists
}

// writeParams encodes the options of a write as the dynamic client does
// (its parameter scheme: the meta/v1 options under version v1).
var (
	writeParams        = runtime.NewScheme()
	writeParamsCodec   = runtime.NewParameterCodec(writeParams)
	writeParamsVersion = schema.GroupVersion{Version: "v1"}
)

func init() {
	metav1.AddToGroupVersion(writeParams, writeParamsVersion)
}

// Target is what a raw request names: a resource, a namespace (empty for
// a cluster-scoped resource) and an object's name.
type Target struct {
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

// RawDelete is the dynamic client's Delete of t, through lists, returning
// the UID of the object the server deleted ("" when unknown). A deletion
// wait follows that UID, as kubectl's does: an object a controller creates
// again under the name before the wait first lists is another object.
func RawDelete(ctx context.Context, lists rest.Interface, t Target, opts metav1.DeleteOptions) (types.UID, error) {
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"} // as the dynamic client sends them
	body, err := json.Marshal(&opts)
	if err != nil {
		return "", err
	}
	if err := t.valid(); err != nil {
		return "", err
	}
	res := lists.Delete().AbsPath(t.objectPath()...).SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
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

// valid refuses, as the dynamic client does and in its words, a namespace
// and a name that cannot be a path segment: the request path
// is cleaned, so "../x" would name another resource.
func (t Target) valid() error {
	if t.Namespace != "" {
		if err := validNamespace(t.Namespace); err != nil {
			return err
		}
	}
	if msgs := rest.IsValidPathSegmentName(t.Name); len(msgs) != 0 {
		return fmt.Errorf("invalid resource name %q: %v", t.Name, msgs)
	}
	return nil
}

func validNamespace(namespace string) error {
	if msgs := rest.IsValidPathSegmentName(namespace); len(msgs) != 0 {
		return fmt.Errorf("invalid namespace %q: %v", namespace, msgs)
	}
	return nil
}

// objectPath is the path of t's object.
func (t Target) objectPath() []string {
	return append(ListPath(t.Resource, t.Namespace), t.Name)
}
