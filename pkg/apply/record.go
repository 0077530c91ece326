package apply

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
)

// RecordPatch is a JSON merge patch of one object's last-applied record,
// computed before any object of the command is written.
type RecordPatch struct {
	Target *load.Object
	// Live is the object as read to plan the patch (nil when not read): an
	// admission webhook sees, and may quote, its values, which the file's
	// may not be.
	Live *unstructured.Unstructured
	// Patch is nil when the record is already what it would write.
	Patch []byte
}

// Unchanged says whether the patch changes nothing.
func (p RecordPatch) Unchanged() bool { return p.Patch == nil }

// Send sends the patch under fieldManager (ClientSideFieldManager when
// empty, as kubectl edit-last-applied): with dryRun=All in a server dry
// run, not at all in a client dry run.
func (p RecordPatch) Send(ctx context.Context, dryRun DryRun, fieldManager string) error {
	if dryRun == ClientDryRun {
		return nil
	}
	// resource.Helper takes no context: honour a cancelled one before
	// writing, never after a write that succeeded.
	if err := ctx.Err(); err != nil {
		return load.ErrorOf(p.Target, err)
	}
	helper := resource.NewHelper(p.Target.Info.Client, p.Target.Info.Mapping).
		WithFieldManager(cmp.Or(fieldManager, ClientSideFieldManager)).
		DryRun(dryRun == ServerDryRun)
	info := p.Target.Info
	if _, err := helper.Patch(info.Namespace, info.Name, types.MergePatchType, p.Patch, nil); err != nil {
		return load.ErrorOf(p.Target, fmt.Errorf("patching the last-applied record: %w", err))
	}
	return nil
}

// PlanSet computes the patch that records the file of t as its last-applied
// configuration and changes nothing else, as kubectl apply
// set-last-applied; createMissing allows objects that have no record.
func PlanSet(ctx context.Context, t *load.Object, createMissing bool) (RecordPatch, error) {
	live, err := getLive(ctx, t)
	if err != nil {
		return RecordPatch{}, load.ErrorOf(t, err)
	}
	record, err := lastapplied.SetRecord(t.Obj, live)
	if err != nil {
		return RecordPatch{}, load.ErrorOf(t, err)
	}
	patch, err := lastapplied.Set(live, record, createMissing)
	return RecordPatch{Target: t, Live: live, Patch: patch}, load.ErrorOf(t, err)
}

// PlanEdit computes the patch that records edited, the YAML saved in an
// editor that was given before (lastapplied.View of t's live object, as
// ReadLive returns it), as kubectl apply edit-last-applied.
func PlanEdit(t *load.Object, before, edited []byte) (RecordPatch, error) {
	if bytes.Equal(before, edited) {
		return RecordPatch{Target: t}, nil
	}
	obj, err := lastapplied.FromYAML(edited)
	if err != nil {
		return RecordPatch{}, load.ErrorOf(t, err)
	}
	live := t.Obj
	if obj.GetKind() != live.GetKind() || obj.GetName() != live.GetName() {
		return RecordPatch{}, load.ErrorOf(t, fmt.Errorf("the edited record names %s %q; kind and name must stay %s %q", obj.GetKind(), obj.GetName(), live.GetKind(), live.GetName()))
	}
	record, err := lastapplied.SetRecord(obj, live)
	if err != nil {
		return RecordPatch{}, load.ErrorOf(t, err)
	}
	patch, err := lastapplied.Set(live, record, true)
	return RecordPatch{Target: t, Patch: patch}, load.ErrorOf(t, err)
}

// ErrNotFound reports an object of a file that does not exist on the server.
var ErrNotFound = errors.New("not found on the server")

// getLive reads the live object of a target.
func getLive(ctx context.Context, t *load.Object) (*unstructured.Unstructured, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	obj, err := resource.NewHelper(t.Info.Client, t.Info.Mapping).Get(t.Info.Namespace, t.Info.Name)
	if apierrors.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading live object: %w", err)
	}
	live, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("reading live object: unexpected type %T", obj)
	}
	return live, nil
}
