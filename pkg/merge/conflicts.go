package merge

import "github.com/kapply/kapply/pkg/fieldpath"

// SameFunc tells whether the value recorded at path in the last-applied
// configuration is the live one; nil means fieldpath.Equal. A caller whose
// records hold digests in place of values (redacted Secrets, compact
// records) compares through them.
type SameFunc func(path fieldpath.Path, recorded, live any) bool

// Conflicts lists the fields the plan changes that someone else changed
// since the last apply: live no longer holds what lastApplied recorded
// there (another value, or present on one side only). These are the
// conflicts of kubectl apply --overwrite=false (apimachinery's
// CreateThreeWayMergePatch with overwrite false: the patch against the
// changes from original to current). Fields the plan only keeps, or clears
// because the file sets their parent whole, are not changed by the patch
// and never conflict. Without a record (lastApplied nil) every live field
// the plan changes counts as changed by someone else, as in kubectl.
func (p *Plan) Conflicts(lastApplied, live map[string]any, same SameFunc) []fieldpath.Path {
	if same == nil {
		same = func(_ fieldpath.Path, recorded, live any) bool { return fieldpath.Equal(recorded, live) }
	}
	var out []fieldpath.Path
	for _, ch := range p.Changes {
		if ch.Reason != SetByFile && ch.Reason != RemovedFromFile {
			continue
		}
		recorded, lErr := ch.Path.Lookup(lastApplied)
		current, cErr := ch.Path.Lookup(live)
		inL, inC := lErr == nil, cErr == nil
		if inL != inC || (inC && !same(ch.Path, recorded, current)) {
			out = append(out, ch.Path)
		}
	}
	return out
}
