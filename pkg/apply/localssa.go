package apply

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/pkg/plan"
)

// LocalServerSideNote labels a result of server-side apply computed by
// kapply instead of the server (see localServerSide); diff prints it.
const LocalServerSideNote = "server-side apply computed locally (structured-merge-diff on the live managedFields), " +
	"not by the server: no admission, no server defaults"

// statusReset is what the API server ignores of an apply to an object's
// main resource: its status, which only the status subresource writes.
var statusReset = fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status")))

// localServerSide computes, without a request, what the server's apply of
// body (the apply configuration, without its last-applied record) to live
// (nil: absent) under the run's field manager would store: the API
// server's own field manager (apimachinery's managedfields, with
// structured-merge-diff) run on the live object and its managedFields.
// Fields other managers own are taken with ForceConflicts; without it
// they are a 409 naming each field and manager, as the server's.
//
// An object made by client-side apply is taken as it is, with its
// client-side managers' fields, as the server's dry run takes it: Apply
// hands those fields to the manager first (csaupgrade), but a dry run
// cannot write that upgrade, so neither the server's dry run nor this
// computation makes it. (With the upgrade, the fields the server
// defaulted at create, which client-side apply owns and the file leaves
// out, would be removed here and show as removals the server, which
// defaults them again, never makes.) The server's own waiver for the
// manager "kubectl" — no conflict on a field the last-applied record set
// to the live value — runs here too: it is part of the field manager.
//
// What the server adds after merging is not known here: defaults,
// mutating admission, a new generation. Status is the live object's, as
// the server keeps it on a write to the main resource (none on create).
// A kind whose schema the server does not publish merges with the
// deduced types, every field atomic, as the server merges a custom
// resource without schema; the returned warning says so.
func (r *runner) localServerSide(o *object, live, body *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	gvk := body.GroupVersionKind()
	converter, warnings, err := r.ssaConverter(o, gvk)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, otherVersionOwners(o, live, gvk)...)
	newManager := managedfields.NewDefaultFieldManager
	if !r.isBuiltin(gvk) {
		newManager = managedfields.NewDefaultCRDFieldManager
	}
	reset := map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(gvk.GroupVersion().String()): statusReset}
	manager, err := newManager(converter, sameVersion{}, noDefaults{}, emptyObjects{}, gvk, gvk.GroupVersion(), "", reset)
	if err != nil {
		return nil, warnings, fmt.Errorf("computing server-side apply locally: %w", err)
	}
	applied, err := manager.Apply(localLive(gvk, live), body.DeepCopy(), r.opts.FieldManager, r.opts.ForceConflicts)
	if err != nil {
		return nil, warnings, err
	}
	result, ok := applied.(*unstructured.Unstructured)
	if !ok {
		return nil, warnings, fmt.Errorf("computing server-side apply locally: got a %T", applied)
	}
	if err := asStored(result); err != nil {
		return nil, warnings, err
	}
	keepLiveStatus(result, live)
	return result, warnings, nil
}

// ssaConverter is the kind's type converter: the server's schema, or,
// for a custom kind without one, the deduced types with a warning.
func (r *runner) ssaConverter(o *object, gvk k8sschema.GroupVersionKind) (managedfields.TypeConverter, []string, error) {
	converter, err := r.ssa.converter(gvk)
	switch {
	case err == nil:
		return converter, nil, nil
	case errors.Is(err, errNoSchema) && !r.isBuiltin(gvk):
		return managedfields.NewDeducedTypeConverter(), []string{fmt.Sprintf("%s: the server publishes no schema of %s: "+
			"server-side apply computed locally treats every field as atomic (the server merges by the CRD's schema)", o.Ref(), gvk.Kind)}, nil
	}
	return nil, nil, fmt.Errorf("computing server-side apply locally: %s: %w", gvk, err)
}

// otherVersionOwners warns of the object's managers whose fields are
// recorded in another version than the file's: the server converts the
// object to that version to tell what each owns and what conflicts, the
// local computation cannot (it reads every version as the file's, with
// the file's schema), so ownership, conflicts and removals may differ.
func otherVersionOwners(o *object, live *unstructured.Unstructured, gvk k8sschema.GroupVersionKind) []string {
	if live == nil {
		return nil
	}
	byVersion := map[string][]string{}
	for _, entry := range live.GetManagedFields() {
		// A subresource's entry (status) owns nothing an apply to the
		// main resource touches.
		if entry.Subresource == "" && entry.APIVersion != "" && entry.APIVersion != gvk.GroupVersion().String() {
			byVersion[entry.APIVersion] = append(byVersion[entry.APIVersion], strconv.Quote(entry.Manager))
		}
	}
	var warnings []string
	for _, version := range slices.Sorted(maps.Keys(byVersion)) {
		warnings = append(warnings, fmt.Sprintf("%s: server-side apply computed locally may differ from the server's: "+
			"the fields of %s are recorded in %s, which the server converts to %s and the local computation cannot",
			o.Ref(), strings.Join(slices.Compact(slices.Sorted(slices.Values(byVersion[version]))), ", "), version, gvk.GroupVersion()))
	}
	return warnings
}

// localLive is what the server's field manager starts from: the live
// object, or the empty object of the kind.
func localLive(gvk k8sschema.GroupVersionKind, live *unstructured.Unstructured) *unstructured.Unstructured {
	if live == nil {
		empty, _ := emptyObjects{}.New(gvk)
		return empty.(*unstructured.Unstructured)
	}
	return live.DeepCopy()
}

// localBuiltins are the Go types of the built-in kinds, for asStored.
var localBuiltins = sync.OnceValues(builtinScheme)

// asStored makes result what the API server stores and answers: a
// built-in kind goes through its Go type (as the server decodes and
// encodes it: nulls and empty optional fields dropped, quantities in
// canonical form), a custom resource loses its nulls (the server prunes
// them).
func asStored(result *unstructured.Unstructured) error {
	builtins, err := localBuiltins()
	if err != nil {
		return err
	}
	typed, err := builtins.New(result.GroupVersionKind())
	if err != nil {
		pruneNulls(result.Object)
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(result.Object, typed); err != nil {
		return fmt.Errorf("computing server-side apply locally: decoding the result: %w", err)
	}
	stored, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return fmt.Errorf("computing server-side apply locally: encoding the result: %w", err)
	}
	if metadata, ok := stored["metadata"].(map[string]any); ok && metadata["creationTimestamp"] == nil {
		delete(metadata, "creationTimestamp")
	}
	result.Object = stored
	return nil
}

// keepLiveStatus gives result the live object's status, or none.
func keepLiveStatus(result, live *unstructured.Unstructured) {
	delete(result.Object, "status")
	if live == nil {
		return
	}
	if status, ok := live.Object["status"]; ok {
		result.Object["status"] = status
	}
}

// planLocalServerSide completes a server-side apply item with the result
// computed locally: the item's Merged and the event's Result and outcome.
func (r *runner) planLocalServerSide(o *object, live, body *unstructured.Unstructured, it *plan.Item, ev *Event) error {
	result, warnings, err := r.localServerSide(o, live, body)
	ev.Warnings = append(ev.Warnings, warnings...)
	if err != nil {
		return explainConflicts(o, live, err)
	}
	it.Merged, ev.Result = result.Object, result
	ev.Outcome = writeOutcome(live, result, true, false)
	if it.Subresource != "" {
		return nil
	}
	// What the apply changes, as a server dry run's would say (kapply
	// plan --server-side): Verify checks them, so that a move elsewhere
	// since (a controller's status) does not refuse the item.
	changes, err := serverSideChanges(body, live, result)
	if err != nil {
		return err
	}
	it.Changes, it.ChangesKnown = changes, true
	return nil
}
