package main

import (
	"context"
	"fmt"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Floor client limits: high enough never to throttle.
const (
	floorQPS   = 1000
	floorBurst = 2000
	floorOwner = "kapply-bench-floor"
)

// floor is the least any client-side apply has to do, in process: read the
// files, then the requests kapply has to make, with the same parallelism.
// It trusts the last-applied record (no three-way merge against live) and
// renders nothing, so it is a floor, not a competitor.
type floor struct {
	client   dynamic.Interface
	mapper   meta.RESTMapper
	parallel int
}

func newFloor(cfg *rest.Config, parallel int) (*floor, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = floorQPS, floorBurst
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the floor's client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the floor's discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &floor{client: client, mapper: mapper, parallel: parallel}, nil
}

func (f *floor) name() string { return nameFloor }

// supports every phase but a saved plan's and an ApplySet's, which are kapply's own.
func (f *floor) supports(p phase) bool { return !p.plans() && !p.inSet() }

func (f *floor) describe() string {
	return fmt.Sprintf("floor: client-go in process, %d workers, QPS %d, burst %d; "+
		"create = LIST per (resource, namespace) + POST per object, noop = LIST per (resource, namespace), "+
		"update = LIST + strategic merge PATCH per object, diff = update with dryRun=All, diff-local = LIST + the patches computed, not sent",
		f.parallel, floorQPS, floorBurst)
}

func (f *floor) run(ctx context.Context, p phase, dir string, want int) (outcome, error) {
	objs, err := f.load(dir)
	if err != nil {
		return outcome{}, err
	}
	if len(objs) != want {
		return outcome{}, fmt.Errorf("floor: loaded %d objects from %s, want %d", len(objs), dir, want)
	}
	switch p {
	case phaseCreate:
		return outcome{summary: fmt.Sprintf("%d created", want)}, f.inOrder(ctx, objs, f.create)
	case phaseNoop:
		return outcome{summary: fmt.Sprintf("%d unchanged", want)}, f.noop(ctx, objs)
	case phaseUpdate:
		return outcome{summary: fmt.Sprintf("%d configured", want)}, f.inOrder(ctx, objs, f.update)
	case phaseDiffLocal:
		return outcome{summary: fmt.Sprintf("%d differ", want)}, f.diffLocal(ctx, objs)
	default:
		return outcome{summary: fmt.Sprintf("%d differ", want)}, f.diff(ctx, objs)
	}
}

// inOrder runs step on the Namespaces, then on everything else.
func (f *floor) inOrder(ctx context.Context, objs []*fileObject, step func(context.Context, []*fileObject) error) error {
	var namespaces, others []*fileObject
	for _, o := range objs {
		if o.mapping.Resource.Group == "" && o.mapping.Resource.Resource == "namespaces" {
			namespaces = append(namespaces, o)
		} else {
			others = append(others, o)
		}
	}
	if err := step(ctx, namespaces); err != nil {
		return err
	}
	return step(ctx, others)
}

// create lists what exists (one LIST per resource and namespace, as kapply
// does for many objects), checks no object does, then creates each one.
func (f *floor) create(ctx context.Context, objs []*fileObject) error {
	live, err := f.listLive(ctx, objs)
	if err != nil {
		return err
	}
	return forEach(ctx, f.parallel, len(objs), func(ctx context.Context, i int) error {
		o := objs[i]
		if live.has(o) {
			return fmt.Errorf("floor: creating %s: it exists already", o)
		}
		if _, err := f.resource(o).Create(ctx, o.obj, metav1.CreateOptions{FieldManager: floorOwner}); err != nil {
			return fmt.Errorf("floor: creating %s: %w", o, err)
		}
		return nil
	})
}

// noop lists the live objects and checks each one's last-applied record is
// the file's.
func (f *floor) noop(ctx context.Context, objs []*fileObject) error {
	live, err := f.listLive(ctx, objs)
	if err != nil {
		return err
	}
	for _, o := range objs {
		applied, err := live.lastApplied(o)
		if err != nil {
			return err
		}
		if applied != o.applied {
			return fmt.Errorf("floor: %s differs from its file on a re-apply", o)
		}
	}
	return nil
}

// update lists the live objects, then sends each one a strategic merge
// patch from its last-applied record to the file.
func (f *floor) update(ctx context.Context, objs []*fileObject) error {
	return f.patchAll(ctx, objs, nil)
}

// diff is update with a server dry run, which is how kubectl diff and
// kapply diff compute the result by default; nothing is rendered.
func (f *floor) diff(ctx context.Context, objs []*fileObject) error {
	return f.patchAll(ctx, objs, []string{metav1.DryRunAll})
}

// diffLocal lists the live objects and computes each one's patch, which
// must not be empty, without sending it: the least a diff computed on the
// client does (kapply diff --dry-run=client also merges and renders).
func (f *floor) diffLocal(ctx context.Context, objs []*fileObject) error {
	live, err := f.listLive(ctx, objs)
	if err != nil {
		return err
	}
	return forEach(ctx, f.parallel, len(objs), func(ctx context.Context, i int) error {
		patch, _, err := live.patch(objs[i])
		if err == nil && len(patch) <= 2 {
			err = fmt.Errorf("floor: %s: empty patch, want a change", objs[i])
		}
		return err
	})
}

// patchAll lists the live objects, then patches each one, which must differ
// from its file.
func (f *floor) patchAll(ctx context.Context, objs []*fileObject, dryRun []string) error {
	live, err := f.listLive(ctx, objs)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: floorOwner, DryRun: dryRun}
	return forEach(ctx, f.parallel, len(objs), func(ctx context.Context, i int) error {
		o := objs[i]
		patch, patchType, err := live.patch(o)
		if err != nil {
			return err
		}
		if _, err := f.resource(o).Patch(ctx, o.obj.GetName(), patchType, patch, opts); err != nil {
			return fmt.Errorf("floor: patching %s: %w", o, err)
		}
		return nil
	})
}

// forEach calls fn with 0..n-1 on at most parallel goroutines and returns
// the first error, after which the calls not started are skipped.
func forEach(ctx context.Context, parallel, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	feed(ctx, next, n)
	wg.Wait()
	return context.Cause(ctx)
}

// feed sends 0..n-1 until ctx is done, then closes next.
func feed(ctx context.Context, next chan<- int, n int) {
	defer close(next)
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			return
		}
	}
}

// typedStruct is the Go type strategic merge patches of a built-in kind are
// computed against.
func typedStruct(o *fileObject) (any, error) {
	obj, err := scheme.Scheme.New(o.obj.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("floor: %s is not a built-in kind: %w", o, err)
	}
	return obj, nil
}

// lastAppliedKey is the annotation holding the last-applied record.
const lastAppliedKey = corev1.LastAppliedConfigAnnotation

// computePatch is the patch from the last-applied record to the file, the
// file's new record included: a strategic merge patch for built-in kinds, a
// JSON merge patch for custom resources (as kubectl and kapply send them).
func computePatch(o *fileObject, lastApplied string) ([]byte, types.PatchType, error) {
	modified, err := o.obj.MarshalJSON()
	if err != nil {
		return nil, "", fmt.Errorf("floor: encoding %s: %w", o, err)
	}
	if !scheme.Scheme.Recognizes(o.obj.GroupVersionKind()) {
		patch, err := jsonpatch.CreateMergePatch([]byte(lastApplied), modified)
		if err != nil {
			return nil, "", fmt.Errorf("floor: computing the patch of %s: %w", o, err)
		}
		return patch, types.MergePatchType, nil
	}
	dataStruct, err := typedStruct(o)
	if err != nil {
		return nil, "", err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch([]byte(lastApplied), modified, dataStruct)
	if err != nil {
		return nil, "", fmt.Errorf("floor: computing the patch of %s: %w", o, err)
	}
	return patch, types.StrategicMergePatchType, nil
}
