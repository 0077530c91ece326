package plan

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
)

// ErrSecretMismatch: the files' Secret is not the one the plan was made
// with, or lacks a value the plan writes.
var ErrSecretMismatch = errors.New("the Secret in the files does not match the plan")

// WithSecretValues returns it ready to execute: a Secret's digests in its
// patch (and, for a create, its object) replaced by the values of file,
// the Secret as the run sends it (with its last-applied record attached,
// when records keep values plainly). Every value file sets must have the
// digest the plan holds (so what runs is what was approved), and every
// digest the write carries must be restored. Errors name keys, never
// values. Items of other kinds are returned as they are.
func (it Item) WithSecretValues(file *unstructured.Unstructured) (Item, error) {
	if !it.ID.isSecret() {
		return it, nil
	}
	if err := it.checkDigestKey(); err != nil {
		return Item{}, err
	}
	if err := sameValues(it, file.Object); err != nil {
		return Item{}, fmt.Errorf("%s: %w", it.ID, err)
	}
	r := &restorer{file: file.Object, key: it.DigestKey}
	patch, err := walkPatch(r, it.Patch)
	if err != nil {
		return Item{}, fmt.Errorf("%s: %w", it.ID, err)
	}
	missing := r.missing
	merged, err := walkObject(r, it.Merged)
	if err != nil {
		return Item{}, fmt.Errorf("%s: %w", it.ID, err)
	}
	// Merged is sent only by a create; for a patch it may keep digests of
	// live-only keys (data when the file gives stringData), which the
	// files cannot restore and nothing sends.
	if it.Action == Create {
		missing = r.missing
	}
	if len(missing) > 0 {
		return Item{}, fmt.Errorf("%s: %w: the plan writes %s, which the files do not give", it.ID, ErrSecretMismatch, strings.Join(missing, ", "))
	}
	it.Patch, it.Merged = patch, merged
	return it, nil
}

// sameValues checks each value of file's data and stringData against the
// digest of the plan's merged object (for an apply item, its body), so
// that a value the files changed since is refused even where the patch
// does not write it.
func sameValues(it Item, file map[string]any) error {
	planned := it.Merged
	if planned == nil {
		planned = patchObject(it.Patch)
	}
	if planned == nil {
		return nil // a JSON patch alone: restoring checks each value it writes
	}
	var differ []string
	for _, field := range secretmask.Fields() {
		values, _ := file[field].(map[string]any)
		plannedValues, _ := planned[field].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(values)) {
			v := values[key]
			p, has := plannedValues[key]
			if v != nil && (!has || !sameSecretValue(it.DigestKey, p, field, key, v)) {
				differ = append(differ, field+"."+key)
			}
		}
	}
	if len(differ) > 0 {
		return fmt.Errorf("%w: %s differ from the values the plan was made with", ErrSecretMismatch, strings.Join(differ, ", "))
	}
	return nil
}

// sameSecretValue: planned is v's digest, or v itself (a plan that was
// never encoded).
func sameSecretValue(k lastapplied.DigestKey, planned any, field, key string, v any) bool {
	// Not Go's ==, which panics on two maps or lists: a hand-edited plan
	// or file may hold one where a value belongs.
	return lastapplied.MatchesRedacted(k, planned, field, key, v) || fieldpath.Equal(planned, v)
}

// patchObject is the object an apply body holds (nil when it holds none).
func patchObject(p Patch) map[string]any {
	if p.Type != ApplyPatch {
		return nil
	}
	var body map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(p.Data, &body); err != nil {
		return nil
	}
	return body
}

// restorer puts the file's value in place of each digest it matches, and
// lists the places whose digest no value of the file matches.
type restorer struct {
	file    map[string]any
	key     lastapplied.DigestKey
	missing []string
}

func (r *restorer) value(field, key string, v any) (any, error) {
	if !lastapplied.IsRedacted(v) {
		return v, nil
	}
	values, _ := r.file[field].(map[string]any)
	if fv, has := values[key]; has && lastapplied.MatchesRedacted(r.key, v, field, key, fv) {
		return fv, nil
	}
	r.missing = append(r.missing, field+"."+key)
	return v, nil
}

func (r *restorer) record(annotation string, v any) (any, error) {
	if !lastapplied.IsRedacted(v) {
		return v, nil
	}
	metadata, _ := r.file["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	if text, has := annotations[annotation]; has && lastapplied.MatchesRedacted(r.key, v, "", annotation, text) {
		return text, nil
	}
	r.missing = append(r.missing, "the record "+annotation)
	return v, nil
}

// HasRedactedValues reports whether executing it would send a digest in
// place of a Secret's value: a decoded plan's Secret item before
// WithSecretValues. Execute must refuse such an item.
func (it Item) HasRedactedValues() bool {
	if !it.ID.isSecret() {
		return false
	}
	d := &restorer{}
	if _, err := walkPatch(d, it.Patch); err != nil {
		return true // unreadable: assume the worst
	}
	if it.Action == Create {
		if _, err := walkObject(d, it.Merged); err != nil {
			return true
		}
	}
	return len(d.missing) > 0
}
