package diff

import (
	"fmt"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Comparison is one object ready to print: both sides as shown, and the
// outcome decided from them.
type Comparison struct {
	Object  Object
	Outcome Outcome
	// Live and After are the YAML shown; Live is empty for a creation.
	Live, After string
	// Fields counts the leaf fields that differ.
	Fields int
	// Changed are the paths of those fields in the sides as shown (noise
	// hidden, Secret values masked: a mask says only whether a value
	// changed); lists of equal length by position.
	Changed []fieldpath.Path
	// Identity names the object in the CI reports (markdown, HTML).
	Identity Identity
	// secret is set for a Secret, whose values explain masks.
	secret bool
	// rendered is the text Print writes, when Printer.Rendered made it.
	rendered   string
	isRendered bool
}

// Compare hides noise, masks Secret values, decides the outcome by value
// (fieldpath.Equal) and renders both sides of obj when it differs (of
// every object under Options.AllSides).
// Neither side is modified. The comparison keeps the rendered YAML, not the
// objects: its Object has no Live nor After, so that a diff of many objects
// does not hold each one twice more while it prints.
func Compare(obj Object, opts Options) (Comparison, error) {
	live, after := hideNoise(obj.Live, opts), hideNoise(obj.After, opts)
	// Either side: a pruned Secret has no After, a new one no Live.
	secret := secretmask.IsSecret(obj.After) || secretmask.IsSecret(obj.Live)
	if secret {
		live, after = foldStringData(live), foldStringData(after)
	}
	if !opts.ShowSecrets && secret {
		live, after = maskSecret(live, after)
	}
	changed := fieldpath.CompareObjects(live, after, fieldpath.CompareOptions{Depth: fieldpath.ByPosition}).Paths()
	c := Comparison{Object: obj, Fields: len(changed), Changed: changed, secret: secret, Identity: identityOf(obj.After, obj.Live)}
	c.Outcome = outcome(live, after, obj.After == nil)
	c.Object.Live, c.Object.After = nil, nil
	// An unchanged object prints nothing: its sides are rendered only for
	// an external program, which is given every object, as by kubectl.
	if c.Outcome == Unchanged && !opts.AllSides {
		return c, nil
	}
	var err error
	if c.Live, err = toYAML(live); err != nil {
		return c, fmt.Errorf("rendering live %s: %w", obj.Ref, err)
	}
	if c.After, err = toYAML(after); err != nil {
		return c, fmt.Errorf("rendering merged %s: %w", obj.Ref, err)
	}
	return c, nil
}

// outcome compares the sides by value with the engine's equality, not by
// their YAML, so that diff calls unchanged what apply does (an empty map
// and a nil one are one value, rendered {} and null).
func outcome(live, after map[string]any, deleted bool) Outcome {
	switch {
	case live == nil:
		return Created
	case deleted:
		return Deleted
	case fieldpath.Equal(live, after):
		return Unchanged
	}
	return Changed
}
