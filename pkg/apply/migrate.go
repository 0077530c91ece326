package apply

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	smdpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/secretmask"
)

// MigrateTo is the side Migrate moves objects to.
type MigrateTo int

const (
	// ToServerSide hands client-side apply's fields to a server-side manager.
	ToServerSide MigrateTo = iota
	// ToClientSide hands a server-side manager's fields back to client-side
	// apply and records them as last-applied.
	ToClientSide
)

// MigrateOptions configure Migrate.
type MigrateOptions struct {
	Namespace string
	To        MigrateTo
	DryRun    cluster.DryRun
	// FieldManager is the server-side manager; empty means
	// ServerSideFieldManager.
	FieldManager string
	// FromManagers are managers, beside ownership.ImperativeManagers, whose
	// fields the record names go to FieldManager (tools that wrote under
	// their own names).
	FromManagers []string
	// ForceConflicts takes the record's fields that other managers set to
	// other values (their next server-side apply would conflict); without
	// it such an object is refused.
	ForceConflicts bool
	// DropLastApplied removes the last-applied record (ToServerSide); kept
	// by default, as kubectl keeps it.
	DropLastApplied bool
}

// Migration is one object's move between client-side and server-side
// apply. Fields are printed as SMD paths (.spec.replicas), by manager.
type Migration struct {
	RecordResult
	// HandedOver are the fields each manager hands to the new one.
	HandedOver map[string][]string
	// Left are the fields client-side apply's managers own that the record
	// does not name (released from it by an older kapply, defaults the
	// server set): they go to no manager, so the next server-side apply of
	// a file that does not set them keeps them.
	Left map[string][]string
	// Shared are the record's fields other managers also own, with the same
	// value: they stay theirs too.
	Shared map[string][]string
	// Conflicts are the record's fields other managers set to other values
	// since: what ForceConflicts takes (predicted by the server's dry run of
	// the record's server-side apply).
	Conflicts map[string][]string
	// Skip says why the object is left alone (no record, nothing owned).
	Skip error
}

// ErrMigrateConflicts is the Err of an object refused for its conflicts.
var ErrMigrateConflicts = errors.New("fields owned by other managers with other values")

// Migrate moves each object's live field ownership between client-side and
// server-side apply (kubernetes#99003), changing no value: one merge patch
// of metadata.managedFields (and the record), guarded by resourceVersion.
// Every migration is planned before any is written.
func (a *Applier) Migrate(ctx context.Context, in Input, opts MigrateOptions) ([]Migration, error) {
	ssa := cmp.Or(opts.FieldManager, ServerSideFieldManager)
	writer := ssa
	if opts.To == ToClientSide {
		// The record written is then client-side apply's.
		writer = ClientSideFieldManager
	}
	plan := func(r *runner, ctx context.Context, o *object) (Migration, error) {
		live, err := r.getLive(ctx, o)
		if err != nil {
			return Migration{}, err
		}
		if opts.To == ToClientSide {
			if err := r.keyObject(ctx, o); err != nil {
				return Migration{}, err
			}
			return planToClientSide(live, ssa, o.key)
		}
		return r.planToServerSide(ctx, o, live, ssa, opts)
	}
	migrations, err := planThenWrite(ctx, a, in, opts.Namespace, RecordWrite{DryRun: opts.DryRun, FieldManager: writer}, plan,
		func(m *Migration) *RecordResult { return &m.RecordResult })
	for i := range migrations {
		if m := &migrations[i]; len(m.Conflicts) > 0 && !opts.ForceConflicts {
			m.Unchanged, m.Err = false, ErrorOf(m.Object, m.Source, conflictError(m.Conflicts))
		}
	}
	return migrations, err
}

func (r *runner) planToServerSide(ctx context.Context, o *object, live *unstructured.Unstructured, ssa string, opts MigrateOptions) (Migration, error) {
	if !lastapplied.HasRecord(live) {
		return Migration{Skip: lastapplied.ErrNoRecord}, nil
	}
	probe, err := recordProbe(live)
	if err != nil {
		return Migration{}, err
	}
	forced, err := r.forcedDryRun(ctx, r.resource(o), probe, ssa)
	if err != nil {
		return Migration{}, err
	}
	record, err := ownership.EntrySet(forced.GetManagedFields(), ssa, metav1.ManagedFieldsOperationApply)
	if err != nil {
		return Migration{}, err
	}
	clientSide := clientSideManagers(live)
	imperative := sets.New(append(ownership.ImperativeManagers, opts.FromManagers...)...)
	conflicts, err := ownership.Diff(live.GetManagedFields(), forced.GetManagedFields())
	if err != nil {
		return Migration{}, err
	}
	m := ownership.ServerSideMigration{Record: record, ClientSide: clientSide, Imperative: imperative, To: ssa,
		DropRecord: opts.DropLastApplied, APIVersion: live.GetAPIVersion(), Time: metav1.Now(), Take: smdpath.NewSet()}
	shown := map[string][]string{}
	for manager, set := range conflicts {
		// The manager's own Apply entry loses what the record no longer
		// names; "kubectl (scale)", kubectl scale's, is another manager.
		if owner := strings.SplitN(manager, " (", 2)[0]; manager != ssa && !clientSide.Has(owner) && !imperative.Has(owner) {
			if paths := fieldNames(set); len(paths) > 0 {
				shown[manager] = paths
				m.Take = m.Take.Union(set)
			}
		}
	}
	res, err := migrationOf(live, m, opts.ForceConflicts)
	res.Conflicts = shown
	if len(shown) > 0 && !opts.ForceConflicts {
		res.patch = nil // refused: Migrate says why
	}
	return res, err
}

// migrationOf is the planned ToServerSide write: without force, the
// conflicting fields stay with their managers (and the object is refused).
func migrationOf(live *unstructured.Unstructured, m ownership.ServerSideMigration, force bool) (Migration, error) {
	if !force {
		m.Take = smdpath.NewSet()
	}
	after, err := ownership.ToServerSide(live.GetManagedFields(), m)
	if err != nil {
		return Migration{}, err
	}
	onlyRecord, _, err := ownership.OnlyRecord(live.GetManagedFields(), m.ClientSide, m.Record)
	if err != nil {
		return Migration{}, err
	}
	left, err := ownership.Diff(live.GetManagedFields(), onlyRecord)
	if err != nil {
		return Migration{}, err
	}
	handed, err := ownership.Diff(onlyRecord, after)
	if err != nil {
		return Migration{}, err
	}
	shared, err := ownership.Shared(after, m.Record, sets.New(m.To, lastAppliedFieldManager))
	if err != nil {
		return Migration{}, err
	}
	annotations := map[string]any{}
	if m.DropRecord {
		annotations = map[string]any{lastapplied.Annotation: nil, lastapplied.CompactAnnotation: nil}
	}
	patch, err := managedFieldsPatch(live, after, annotations)
	res := Migration{RecordResult: RecordResult{Live: live, patch: patch}, HandedOver: byManager(handed), Left: byManager(left), Shared: byManager(shared)}
	if len(res.HandedOver) == 0 && len(res.Left) == 0 && !m.DropRecord {
		res.patch = nil
	}
	return res, err
}

// planToClientSide hands the server-side manager's fields to client-side
// apply and records them as the last-applied configuration.
func planToClientSide(live *unstructured.Unstructured, ssa string, k lastapplied.DigestKey) (Migration, error) {
	after, owned, err := ownership.ToClientSide(live.GetManagedFields(), ssa, ClientSideFieldManager)
	if err != nil {
		return Migration{}, err
	}
	if owned.Empty() {
		return Migration{Skip: fmt.Errorf("the field manager %q owns no field of it by server-side apply", ssa)}, nil
	}
	record, err := lastapplied.SetRecord(ownership.RecordOf(live, owned), live, k)
	if err != nil {
		return Migration{}, err
	}
	annotations := map[string]any{lastapplied.Annotation: string(record), lastapplied.CompactAnnotation: nil}
	patch, err := managedFieldsPatch(live, after, annotations)
	return Migration{RecordResult: RecordResult{Live: live, patch: patch},
		HandedOver: map[string][]string{ssa: fieldNames(owned.Difference(lastAppliedFieldPath))}}, err
}

// managedFieldsPatch is the JSON merge patch that sets managedFields and
// annotations, guarded by live's resourceVersion (a concurrent write fails
// it with a conflict).
func managedFieldsPatch(live *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry, annotations map[string]any) ([]byte, error) {
	raw, err := ownership.EntriesJSON(entries)
	if err != nil {
		return nil, fmt.Errorf("encoding managedFields: %w", err)
	}
	metadata := map[string]any{"managedFields": raw, "resourceVersion": live.GetResourceVersion()}
	if len(annotations) > 0 {
		metadata["annotations"] = annotations
	}
	return json.Marshal(map[string]any{"metadata": metadata})
}

// recordProbe is live's record as an apply patch: what the server-side
// manager applies from now on, until the file changes.
func recordProbe(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	record, err := lastapplied.Read(live)
	if err != nil {
		return nil, err
	}
	probe := withoutRecord(&unstructured.Unstructured{Object: record})
	unstructured.RemoveNestedField(probe.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(probe.Object, "metadata", "managedFields")
	probe.SetName(live.GetName())
	probe.SetNamespace(live.GetNamespace())
	if secretmask.IsSecret(probe.Object) {
		withLiveSecretValues(probe, live)
	}
	return probe, nil
}

// withLiveSecretValues gives the probe of a Secret the live values of the
// keys its record names: a record kapply redacted holds digests, which the
// server would refuse as data, and a stringData entry is stored under data.
// The dry run needs only which keys the record names.
func withLiveSecretValues(probe, live *unstructured.Unstructured) {
	liveData, _, _ := unstructured.NestedMap(live.Object, "data")
	data := map[string]any{}
	for _, field := range []string{"data", "stringData"} {
		recorded, _, _ := unstructured.NestedMap(probe.Object, field)
		for key := range recorded {
			if v, ok := liveData[key]; ok {
				data[key] = v
			}
		}
	}
	delete(probe.Object, "stringData")
	probe.Object["data"] = data
}

// forcedDryRun is the server's dry run of probe applied by manager with
// --force-conflicts: its managedFields say what the manager would own and
// what it would take from whom.
func (r *runner) forcedDryRun(ctx context.Context, client dynamic.ResourceInterface, probe *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	data, err := probe.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the record as an apply patch: %w", err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: manager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationIgnore}
	var out *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		out, err = client.Patch(ctx, probe.GetName(), types.ApplyPatchType, data, opts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("server dry run of the record's server-side apply: %w", err)
	}
	return out, nil
}

// fieldNames are the leaves of set printed, without the record's own
// annotations.
func fieldNames(set *smdpath.Set) []string {
	var out []string
	set.Difference(lastAppliedFieldPath).Leaves().Iterate(func(p smdpath.Path) {
		if s := p.String(); !strings.Contains(s, lastapplied.CompactAnnotation) {
			out = append(out, s)
		}
	})
	sort.Strings(out)
	return out
}

func byManager(fields map[string]*smdpath.Set) map[string][]string {
	out := map[string][]string{}
	for manager, set := range fields {
		if names := fieldNames(set); len(names) > 0 {
			out[manager] = names
		}
	}
	return out
}

// conflictError says the conflicts as kubectl apply --server-side does.
func conflictError(conflicts map[string][]string) error {
	var lines []string
	for _, manager := range sortedKeys(conflicts) {
		for _, f := range conflicts[manager] {
			lines = append(lines, fmt.Sprintf("- conflict with %q: %s", manager, f))
		}
	}
	plural := "s"
	if len(lines) == 1 {
		plural = ""
	}
	return fmt.Errorf("%w: %d conflict%s:\n%s\nmigrate with --force-conflicts to take them (the next server-side apply then sets the file's values), "+
		"or release them from the record (kapply release)", ErrMigrateConflicts, len(lines), plural, strings.Join(lines, "\n"))
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
