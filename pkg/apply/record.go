package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/shown"
)

// RecordResult is one object's write of its last-applied record alone (a
// JSON merge patch of the annotation), by Adopt, Release, SetLastApplied
// or EditLastApplied.
type RecordResult struct {
	// Object is the object given, and Source where it came from.
	Object *unstructured.Unstructured
	Source plan.Source
	// Live is the object as read to plan the write (nil when not read).
	Live *unstructured.Unstructured
	// Unchanged says the record already was what it would write: nothing
	// was sent.
	Unchanged bool
	// Warnings are the server's warnings about the object's requests,
	// Secret values masked (those of Object and Live among them).
	Warnings []string
	// Err is the write the server refused; the other objects were still
	// written.
	Err error

	// patch is the planned JSON merge patch; nil when Unchanged.
	patch []byte
}

// RecordWrite is how the record-only operations write.
type RecordWrite struct {
	// DryRun: cluster.ClientDryRun sends nothing, cluster.ServerDryRun sends dryRun=All.
	DryRun cluster.DryRun
	// FieldManager is recorded in managedFields for the writes; empty means
	// ClientSideFieldManager, as kubectl edit-last-applied.
	FieldManager string
}

// sendRecord sends the planned patch of res, o's, unless it is unchanged or
// the run is a client dry run; a refusal becomes res.Err.
func (r *runner) sendRecord(ctx context.Context, o *object, res *RecordResult) {
	if res.patch == nil {
		res.Unchanged = true
		return
	}
	if r.opts.DryRun == cluster.ClientDryRun {
		return
	}
	opts := metav1.PatchOptions{FieldManager: r.opts.FieldManager, DryRun: r.serverDryRun()}
	client := r.resource(o)
	err := r.retryTransient(ctx, func() error {
		_, err := client.Patch(ctx, o.Obj.GetName(), types.MergePatchType, res.patch, opts)
		return err
	})
	if err != nil {
		res.Err = errorOf(o, fmt.Errorf("patching the last-applied record: %w", err))
	}
}

// planSet computes the patch that records the object given as its
// last-applied configuration and changes nothing else, as kubectl apply
// set-last-applied; createMissing allows objects that have no record.
func (r *runner) planSet(ctx context.Context, o *object, createMissing bool) (RecordResult, error) {
	live, err := r.getLive(ctx, o)
	if err != nil {
		return RecordResult{}, err
	}
	if err := r.keyObject(ctx, o); err != nil {
		return RecordResult{}, err
	}
	record, err := lastapplied.SetRecord(o.Obj, live, o.key)
	if err != nil {
		return RecordResult{}, err
	}
	patch, err := lastapplied.Set(live, record, createMissing)
	return RecordResult{Object: o.Obj, Source: o.Source, Live: live, patch: patch}, err
}

// planEdit computes the patch that records edited, the YAML saved in place
// of before (lastapplied.View of live), as kubectl apply edit-last-applied.
func planEdit(o *object, live *unstructured.Unstructured, before, edited []byte) (RecordResult, error) {
	if bytes.Equal(before, edited) {
		return RecordResult{Object: o.Obj, Source: o.Source}, nil
	}
	obj, err := lastapplied.FromYAML(edited)
	if err != nil {
		return RecordResult{}, err
	}
	if obj.GetKind() != live.GetKind() || obj.GetName() != live.GetName() {
		return RecordResult{}, fmt.Errorf("the edited record names %s %q; kind and name must stay %s %q", shown.Text(obj.GetKind()), obj.GetName(), shown.Text(live.GetKind()), live.GetName())
	}
	record, err := lastapplied.SetRecord(obj, live, o.key)
	if err != nil {
		return RecordResult{}, err
	}
	patch, err := lastapplied.Set(live, record, true)
	return RecordResult{Object: o.Obj, Source: o.Source, Live: live, patch: patch}, err
}

// ErrNotFound reports an object of a file that does not exist on the server.
var ErrNotFound = errors.New("not found on the server")

// getLive reads the live object of a mapped object.
func (r *runner) getLive(ctx context.Context, o *object) (*unstructured.Unstructured, error) {
	live, err := r.get(ctx, r.resource(o), o)
	if apierrors.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading live object: %w", err)
	}
	return live, nil
}
