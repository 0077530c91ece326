package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
)

// fetchApplySet reads the parent, if any, and the members it records (see
// prune.Set.ReadParent).
func (r *runner) fetchApplySet(ctx context.Context, s *prune.Set) error {
	var parent *unstructured.Unstructured
	err := r.retryTransient(ctx, func() error {
		var err error
		parent, err = r.dynamic.Resource(s.Mapping.Resource).Namespace(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ApplySet parent %s: %w", s, err)
	}
	return s.ReadParent(parent, r.mapper)
}

// writeParent records the members on the parent with a server-side apply,
// creating it if needed (see prune.Set.ParentPatch for superset).
func (r *runner) writeParent(ctx context.Context, s *prune.Set, superset bool) error {
	if r.opts.DryRun == cluster.ClientDryRun {
		return nil
	}
	if err := r.history.refusal(); err != nil {
		return err
	}
	body, err := s.ParentPatch(superset)
	if err != nil {
		return err
	}
	client := r.dynamic.Resource(s.Mapping.Resource).Namespace(s.Namespace)
	force := true // the set's fields are ours, even if kubectl wrote them last
	var parent *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		var err error
		parent, err = client.Patch(ctx, s.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: prune.ParentFieldManager, Force: &force, DryRun: r.serverDryRun()})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating ApplySet parent %s: %w", s, err)
	}
	return r.recordRevision(ctx, parent, superset)
}

// recordRevision begins the run's revision once the superset is on the
// parent (the revision's objects name the parent's UID), and completes it
// once the parent records the set as the run left it.
func (r *runner) recordRevision(ctx context.Context, parent *unstructured.Unstructured, superset bool) error {
	if r.history == nil || len(r.serverDryRun()) > 0 {
		return nil
	}
	if superset {
		return r.beginRevision(ctx, r.history, parent)
	}
	return r.completeRevision(ctx, r.history)
}
