package plan

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Redacted returns p with every Secret's values replaced by keyed
// digests (lastapplied's, under the item's DigestKey and a new salt per
// item) in its patch, merged object, changes, warnings and dry-run
// result: what Encode writes. A plan file is read by more people and
// tools than the cluster's Secrets are, and the key is not in it: whoever
// holds the file alone has nothing to test a guessed value against.
// WithSecretValues puts the values back from the files. A Secret item
// without a key is an error. p is not modified; its other items are
// shared.
func Redacted(p *Plan) (*Plan, error) {
	out := &Plan{Cluster: p.Cluster, Settings: p.Settings, Items: slices.Clone(p.Items)}
	for i, it := range out.Items {
		if !it.ID.isSecret() {
			continue
		}
		redacted, err := redactItem(it)
		if err != nil {
			return nil, fmt.Errorf("redacting the values of item %d (%s): %w", i+1, it.ID, err)
		}
		out.Items[i] = redacted
	}
	return out, nil
}

func redactItem(it Item) (Item, error) {
	salt, err := lastapplied.NewSalt()
	if err != nil {
		return Item{}, err
	}
	r := redactor{salt: salt, key: it.DigestKey}
	// The warnings first, while the values to mask are still there: an
	// apply or JSON patch item may hold them in its body alone.
	it.Warnings = maskWarningsIn(it.Warnings, it.Merged, it.DryRunResult, patchValues(it.Patch))
	if it.Patch, err = walkPatch(r, it.Patch); err != nil {
		return Item{}, err
	}
	if it.Merged, err = walkObject(r, it.Merged); err != nil {
		return Item{}, err
	}
	if it.DryRunResult, err = walkObject(r, it.DryRunResult); err != nil {
		return Item{}, err
	}
	changes := make([]Change, len(it.Changes))
	for i, c := range it.Changes {
		var fields []string
		c.Path, fields = secretPath(c.Path)
		if c.Old, err = walkSecret(r, fields, c.Old); err != nil {
			return Item{}, err
		}
		if c.New, err = walkSecret(r, fields, c.New); err != nil {
			return Item{}, err
		}
		changes[i] = c
	}
	if it.Changes != nil {
		it.Changes = changes
	}
	replaced := make([]Replaced, len(it.Replaced))
	for i, rv := range it.Replaced {
		var fields []string
		rv.Path, fields = secretPath(rv.Path)
		if rv.Live, err = walkSecret(r, fields, rv.Live); err != nil {
			return Item{}, err
		}
		replaced[i] = rv
	}
	if it.Replaced != nil {
		it.Replaced = replaced
	}
	return it, nil
}

// maskWarningsIn masks the values the Secret objects hold in warnings.
func maskWarningsIn(warnings []string, objs ...map[string]any) []string {
	out := slices.Clone(warnings)
	for i, w := range out {
		out[i] = secretmask.Text(w, objs...)
	}
	return out
}

// redactor replaces each value by its digest under one salt and key.
type redactor struct {
	salt lastapplied.Salt
	key  lastapplied.DigestKey
}

func (r redactor) value(field, key string, v any) (any, error) {
	if v == nil || lastapplied.IsRedacted(v) {
		return v, nil // a deletion, or a digest already (a decoded plan)
	}
	return r.salt.Redact(r.key, field, key, v)
}

// record keeps a record that holds no value (kapply's redacted records:
// keys and digests), so a reviewer sees what it says; any other is
// replaced whole by its digest. A packed compact record is not opened:
// it is replaced whole.
func (r redactor) record(annotation string, v any) (any, error) {
	text, isText := v.(string)
	if v == nil || lastapplied.IsRedacted(v) || (isText && !recordHoldsValues(text)) {
		return v, nil
	}
	return r.salt.Redact(r.key, "", annotation, v)
}

// recordHoldsValues reports whether a record's text may hold a Secret
// value: it is not a JSON object (packed, or not readable), or its data or
// stringData hold a value that is not a digest.
func recordHoldsValues(text string) bool {
	var record map[string]any
	if err := json.Unmarshal([]byte(text), &record); err != nil || record == nil {
		return text != ""
	}
	for _, field := range secretmask.Fields() {
		values, isMap := record[field].(map[string]any)
		if !isMap && record[field] != nil {
			return true
		}
		for _, v := range values {
			if v != nil && !lastapplied.IsRedacted(v) {
				return true
			}
		}
	}
	return false
}

// patchValues is a Secret holding the values patch p writes (nil when its
// body cannot be read: redacting it fails then), for masking warnings.
func patchValues(p Patch) map[string]any {
	c := valueCollector{"apiVersion": "v1", "kind": "Secret", "stringData": map[string]any{}}
	if _, err := walkPatch(c, p); err != nil {
		return nil
	}
	return c
}

// valueCollector gathers each value a walk meets under stringData (keys
// do not matter to masking; data values stay base64, which it decodes).
type valueCollector map[string]any

func (c valueCollector) value(field, key string, v any) (any, error) {
	values := c["stringData"].(map[string]any)
	values[fmt.Sprint(len(values))] = v
	if s, isString := v.(string); isString && field == "data" {
		if decoded, err := base64.StdEncoding.DecodeString(s); err == nil {
			values[fmt.Sprint(len(values))] = string(decoded)
		}
	}
	return v, nil
}

func (c valueCollector) record(_ string, v any) (any, error) { return v, nil }
