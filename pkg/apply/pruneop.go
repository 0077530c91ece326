package apply

import (
	"context"
	"errors"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
)

// PruneOptions configure Applier.Prune: what is pruned (the rules of
// pkg/apply/prune, as Apply's Options.Prune) and the two settings of a run
// that pruning reads. Apply takes the rules alone: its Write.Namespace and
// DryRun are the run's.
type PruneOptions struct {
	prune.Options
	// Namespace is given to namespaced objects of the input that name none,
	// and is the namespace of a namespaced ApplySet parent; empty means
	// "default".
	Namespace string
	// DryRun: ClientDryRun deletes nothing and writes no parent (the events
	// say what would go), ServerDryRun sends each deletion and the parent's
	// update with dryRun=All.
	DryRun cluster.DryRun
}

// Prune deletes what the input no longer declares, without applying it:
// for a program that wrote its objects itself and wants kubectl's prune
// alone — the members of an ApplySet (then the parent records the input's
// kinds and namespaces) or, without one, the objects matching the selector
// of the allowlisted kinds that carry a last-applied record. The input is
// what the program declares: objects it wrote (as the server returned them,
// so their UIDs count too, see prune.Declared) or as it built them. An
// ApplySet finds its members by label: the program's writes must carry
// prune.PartOfLabel set to the set's ID (prune.SetID), as Apply's do.
//
// Pruning is refused, with a *PruneError and nothing deleted, when the
// input has load errors or objects that cannot be mapped (their live
// copies could look undeclared), or no objects without AllowEmpty. It
// returns one event per object pruned (Pruned), left alone (Skipped: a
// Namespace or PersistentVolume the allowlist does not name) or a step
// that failed (Failed, with a *PruneError: a LIST, the parent's update).
func (a *Applier) Prune(ctx context.Context, in Input, opts PruneOptions) ([]Event, error) {
	objects, r, err := a.start(ctx, in, settings{WriteOptions: WriteOptions{Namespace: opts.Namespace},
		Options: Options{Prune: &opts.Options, DryRun: opts.DryRun}, Cascade: opts.Cascade})
	if err != nil {
		return nil, err
	}
	declared, unmapped := r.declare(ctx, objects)
	if err := r.prunable(objects, nil, in.Errors); err != nil {
		return nil, &PruneError{Err: errors.Join(append([]error{err}, unmapped...)...)}
	}
	set, err := r.startApplySet(ctx, objects)
	if err != nil {
		return nil, r.maskError(err)
	}
	return r.prune(ctx, set, objects, declared, in.Errors), nil
}

// declare maps each object of the input and settles its namespace, and
// returns what pruning keeps of them: an event per object carrying it as
// its result, so that its UID counts (see declaredBy). An object that
// cannot be prepared is left unmapped, which refuses pruning (prunable),
// with its error.
func (r *runner) declare(ctx context.Context, objects []*object) (declared []Event, unmapped []error) {
	for _, o := range objects {
		if err := r.prepare(ctx, o); err != nil {
			o.Mapping = nil
			unmapped = append(unmapped, errorOf(o, err))
			continue
		}
		declared = append(declared, o.event(Event{Outcome: Unchanged, Result: o.Obj}))
	}
	return declared, unmapped
}
