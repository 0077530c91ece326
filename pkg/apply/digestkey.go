package apply

import (
	"context"
	"sync"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/secretmask"
)

// runKeys are a run's digest keys (cluster.DigestKeys), made on first
// need: what a missing key does depends on the run (see keyMode), known
// only once the run has started.
type runKeys struct {
	once sync.Once
	keys *cluster.DigestKeys
	// readOnly runs (status, view, a plan only shown: diff) never
	// create a key.
	readOnly bool
	// forPlans: the run makes a plan (Applier.Plan) or checks a saved one
	// (Execute's second plan), whose Secret items carry digests.
	forPlans bool
}

// keyMode: a read-only run (diff too: kubectl's diff writes nothing)
// creates no key; a plan that may be executed creates a key it can, or
// works with one of its own (executing the plan then refuses, naming the
// key); a dry run creates none; a run that writes a record creates it.
func (r *runner) keyMode() cluster.KeyMode {
	switch {
	case r.keys.readOnly:
		return cluster.RunKey
	case r.keys.forPlans:
		return cluster.CreateKeyOrRunKey
	case r.opts.DryRun != cluster.NoDryRun:
		return cluster.RunKey
	}
	return cluster.CreateKey
}

// digestKey is the digest key of namespace: the one place a run reads
// (or creates) keys.
func (r *runner) digestKey(ctx context.Context, namespace string) (lastapplied.DigestKey, error) {
	r.keys.once.Do(func() {
		r.keys.keys = &cluster.DigestKeys{Client: r.dynamic, Retries: r.retries, Mode: r.keyMode()}
	})
	return r.keys.keys.For(ctx, namespace)
}

// keyObject gives a v1 Secret o its namespace's digest key, when the run
// needs one: to redact its record, or to plan it (a saved plan keeps its
// values as digests).
func (r *runner) keyObject(ctx context.Context, o *object) error {
	if !secretmask.IsSecret(o.Obj.Object) || !o.key.IsZero() ||
		(!r.keys.forPlans && r.opts.SecretRecord != lastapplied.RedactSecrets) {
		return nil
	}
	k, err := r.digestKey(ctx, o.Obj.GetNamespace())
	o.key = k
	return err
}

// keyItem gives a decoded plan's Secret item its namespace's digest key,
// which its digests are checked under.
func (r *runner) keyItem(ctx context.Context, it plan.Item) (plan.Item, error) {
	if !it.ID.IsSecret() || !it.DigestKey.IsZero() ||
		it.Action == plan.Prune || it.Action == plan.Delete {
		return it, nil
	}
	k, err := r.digestKey(ctx, it.ID.Namespace)
	it.DigestKey = k
	return it, err
}
