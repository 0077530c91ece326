package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/history"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/secretmask"
)

// RollbackOptions configure Applier.Rollback.
type RollbackOptions struct {
	// Revision is the revision to go back to; 0 is the default: the
	// newest complete revision before the newest revision (the one before
	// the current state, or the last complete one when the newest apply
	// was interrupted).
	Revision int
	// Secrets are the values of the revision's Secrets: a revision keeps
	// their keys, never their values, so each Secret member must be given
	// here (kapply rollback -f), or the rollback is refused naming it.
	// Nothing but the revision's Secrets may be given.
	Secrets Input
	// Write is how the members are written (field manager, server-side);
	// Write.Namespace is the set's (ApplySetRef.Namespace).
	Write WriteOptions
}

// RollbackRefusedError is a rollback refused before anything was written:
// Secrets whose values were not given, objects given that are not the
// revision's Secrets, and immutable fields the rollback would change (a
// server dry run of each write says so), each naming its object.
type RollbackRefusedError struct {
	Revision int
	// MissingSecrets are the revision's Secrets without values given.
	MissingSecrets []string
	// NotSecrets are given objects that are not Secrets of the revision.
	NotSecrets []string
	// GivenTwice are Secrets -f gives more than once (which values to
	// restore is not for kapply to guess).
	GivenTwice []string
	// Immutable are the objects whose rollback changes an immutable field:
	// "<object>: <field> (server's message)". kapply rollback --force
	// deletes and re-creates them instead, as apply --force does.
	Immutable []string
}

func (e *RollbackRefusedError) Error() string {
	var parts []string
	if len(e.MissingSecrets) > 0 {
		parts = append(parts, fmt.Sprintf("revision %d keeps no Secret values: give the values of %s with -f (nothing was written)",
			e.Revision, strings.Join(e.MissingSecrets, ", ")))
	}
	if len(e.NotSecrets) > 0 {
		parts = append(parts, fmt.Sprintf("-f gives only the Secrets of revision %d; not one: %s", e.Revision, strings.Join(e.NotSecrets, ", ")))
	}
	if len(e.GivenTwice) > 0 {
		parts = append(parts, fmt.Sprintf("-f gives more than once: %s", strings.Join(e.GivenTwice, ", ")))
	}
	for _, im := range e.Immutable {
		parts = append(parts, fmt.Sprintf("rolling back %s changes an immutable field (nothing was written; --force deletes and re-creates the object)", im))
	}
	return "rollback to revision " + fmt.Sprint(e.Revision) + " refused: " + strings.Join(parts, "; ")
}

// Rollback plans bringing an ApplySet back to a revision: each member of
// the revision is planned by the ordinary three-way merge against the
// live object (so fields other writers set stay: an autoscaler's
// replicas, a controller's list element), members pruned since are
// created again, and members added since are pruned. Each write is sent
// as a server dry run, so that an immutable field the rollback changes is
// refused by name before anything is written. The plan is executed as any
// other (Execute, with Secrets' values as ExecuteOptions.Objects); its
// Settings.RollbackTo names the revision, whose members Execute reads
// again from the history, so a saved rollback plan needs only the
// Secrets' values. Executed with history options, it is itself a
// revision.
func (a *Applier) Rollback(ctx context.Context, ref ApplySetRef, opts RollbackOptions) (*plan.Plan, error) {
	opts.Write.Namespace = ref.Namespace
	in, revision, err := a.RollbackInput(ctx, ref, opts.Revision, opts.Secrets)
	if err != nil {
		return nil, err
	}
	p, err := a.Plan(ctx, in, PlanOptions{Write: opts.Write, ServerDryRun: true,
		Prune: &prune.Options{ApplySet: ref.ApplySet}})
	if immutable := immutableFailures(err); len(immutable) > 0 {
		return p, &RollbackRefusedError{Revision: revision, Immutable: immutable}
	}
	if p != nil {
		p.Settings.RollbackTo = revision
	}
	return p, err
}

// RollbackInput is what a rollback to revision (0: the default, see
// RollbackOptions.Revision) applies: the revision's members, its Secrets
// from secrets, with the revision's number.
func (a *Applier) RollbackInput(ctx context.Context, ref ApplySetRef, revision int, secrets Input) (Input, int, error) {
	r, err := a.runner(ctx, settings{WriteOptions: WriteOptions{Namespace: ref.Namespace}})
	if err != nil {
		return Input{}, 0, err
	}
	return r.rollbackInput(ctx, ref, revision, secrets)
}

func (r *runner) rollbackInput(ctx context.Context, ref ApplySetRef, revision int, secrets Input) (Input, int, error) {
	set, err := prune.ParseSet(ref.ApplySet, r.opts.Namespace, r.mapper)
	if err != nil {
		return Input{}, 0, err
	}
	store, err := r.storeOf(set, ref.HistoryNamespace)
	if err != nil {
		return Input{}, 0, err
	}
	revs, _, err := r.readHistory(ctx, store)
	if err != nil {
		return Input{}, 0, err
	}
	name := set.String()
	if set.Namespace != "" {
		// Named with its namespace: -n forgotten finds no history.
		name += " in namespace " + set.Namespace
	}
	target, err := rollbackTarget(revs, revision, name)
	if err != nil {
		return Input{}, 0, err
	}
	in, err := r.revisionInput(target, secrets)
	return in, target.Number, err
}

// rollbackTarget picks the revision to go back to among revs (oldest
// first).
func rollbackTarget(revs []history.Revision, number int, set string) (history.Revision, error) {
	if len(revs) == 0 {
		return history.Revision{}, fmt.Errorf("ApplySet %s has no revisions to roll back to (history is recorded by apply --applyset)", set)
	}
	if number == 0 {
		for i := len(revs) - 2; i >= 0; i-- {
			if revs[i].Complete && revs[i].Unreadable == nil {
				return revs[i], nil
			}
		}
		return history.Revision{}, fmt.Errorf("ApplySet %s has no complete revision before revision %d to roll back to", set, revs[len(revs)-1].Number)
	}
	if newest := revs[len(revs)-1].Number; number > newest {
		return history.Revision{}, fmt.Errorf("ApplySet %s has no revision %d (the newest is %d)", set, number, newest)
	}
	for _, rev := range revs {
		if rev.Number != number {
			continue
		}
		if rev.Unreadable != nil {
			return history.Revision{}, fmt.Errorf("revision %d of ApplySet %s cannot be rolled back to: %w", number, set, rev.Unreadable)
		}
		if !rev.Complete {
			return history.Revision{}, fmt.Errorf("revision %d of ApplySet %s is incomplete (its apply did not finish): roll back to a complete one", number, set)
		}
		return rev, nil
	}
	return history.Revision{}, fmt.Errorf("revision %d of ApplySet %s is not kept (kept: %d to %d)", number, set, revs[0].Number, revs[len(revs)-1].Number)
}

// revisionInput is rev's members as objects to apply, each Secret replaced
// by the one secrets gives.
func (r *runner) revisionInput(rev history.Revision, secrets Input) (Input, error) {
	refused := &RollbackRefusedError{Revision: rev.Number}
	given := map[string]*unstructured.Unstructured{}
	// names are the given objects as errors name them (not MemberID's key).
	names := map[string]string{}
	scopes := map[schema.GroupVersionKind]bool{}
	for _, s := range secrets.Objects {
		s = r.configurationOf(s, scopes)
		id := history.MemberID(s.Object)
		if _, twice := given[id]; twice {
			refused.GivenTwice = append(refused.GivenTwice, eventName(Event{Object: s}))
		}
		given[id] = s
		names[id] = eventName(Event{Object: s})
	}
	var in Input
	for _, m := range rev.Members {
		obj := &unstructured.Unstructured{Object: m}
		obj = obj.DeepCopy()
		if secretmask.IsSecret(m) {
			id := history.MemberID(m)
			s, ok := given[id]
			if !ok {
				refused.MissingSecrets = append(refused.MissingSecrets, "Secret "+obj.GetNamespace()+"/"+obj.GetName())
				continue
			}
			delete(given, id)
			obj = s
		}
		in.Objects = append(in.Objects, obj)
	}
	for id := range given {
		refused.NotSecrets = append(refused.NotSecrets, names[id])
	}
	sort.Strings(refused.NotSecrets)
	if len(refused.MissingSecrets) > 0 || len(refused.NotSecrets) > 0 || len(refused.GivenTwice) > 0 {
		return Input{}, refused
	}
	if len(in.Objects) == 0 {
		return Input{}, fmt.Errorf("revision %d has no members: rolling it back would prune every member (apply --prune --applyset with no objects does that)", rev.Number)
	}
	return in, nil
}

// immutableFailures names the objects whose server dry run a plan error
// reports as changing an immutable field, with the fields.
func immutableFailures(err error) []string {
	var planErr *PlanError
	if !errors.As(err, &planErr) {
		return nil
	}
	var out []string
	for _, e := range planErr.Errs {
		var failure *PlanFailure
		if !errors.As(e, &failure) || !apierrors.IsInvalid(failure.Event.Err) {
			continue
		}
		if fields := immutableFields(failure.Event.Err); len(fields) > 0 {
			out = append(out, fmt.Sprintf("%s: %s", eventName(failure.Event), strings.Join(fields, ", ")))
		}
	}
	return out
}

// immutableFields are the fields an Invalid error says are immutable.
func immutableFields(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		if strings.Contains(c.Message, "immutable") {
			out = append(out, c.Field)
		}
	}
	return out
}

// eventName names an event's object as errors do: kind namespace/name.
func eventName(ev Event) string {
	if ev.Object == nil {
		return "(unknown object)"
	}
	name := ev.Object.GetName()
	if ns := ev.Object.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return ev.Object.GetKind() + " " + name
}

// rollbackObjects are, for a rollback plan (Settings.RollbackTo), the
// objects it is checked against: its revision's members read again from
// the set's history, with the Secrets' values opts.Objects gives; the
// revision it records says so unless opts give a change cause.
func (r *runner) rollbackObjects(ctx context.Context, p *plan.Plan, opts ExecuteOptions) (ExecuteOptions, error) {
	if p.Settings.RollbackTo == 0 {
		return opts, nil
	}
	ref := ApplySetRef{ApplySet: p.Settings.ApplySet, Namespace: p.Settings.Namespace}
	if opts.History != nil {
		ref.HistoryNamespace = opts.History.Namespace
		h := *opts.History
		if h.ChangeCause == "" {
			h.ChangeCause = fmt.Sprintf("rollback to revision %d", p.Settings.RollbackTo)
		}
		opts.History = &h
	}
	in, _, err := r.rollbackInput(ctx, ref, p.Settings.RollbackTo, opts.Objects)
	if err != nil {
		return opts, err
	}
	opts.Objects = in
	return opts, nil
}
