package ignore

import (
	"fmt"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// samePositions checks that every list position on p names, in live and
// in file, the same element: a keyed list's elements there hold the same
// key. A rule's pointer names a position, which apply --respect-ignore
// reads on live; copied to a file whose list is in another order, the
// value would land on another element (one container's image on
// another). Positions past either list's end, or in unkeyed lists, are
// left to the position.
func samePositions(p fieldpath.Path, live, file map[string]any) error {
	var l, f any = live, file
	for i, e := range p {
		if e.IsField() {
			lm, _ := l.(map[string]any)
			fm, _ := f.(map[string]any)
			l, f = lm[e.Field], fm[e.Field]
			continue
		}
		ll, _ := l.([]any)
		fl, _ := f.([]any)
		if !e.IsIndex() || e.Index < 0 || e.Index >= len(ll) || e.Index >= len(fl) {
			return nil
		}
		if key := fieldpath.ListKey(ll, fl); key != "" {
			lk := fieldpath.ScalarText(ll[e.Index].(map[string]any)[key])
			fk := fieldpath.ScalarText(fl[e.Index].(map[string]any)[key])
			if lk != fk {
				return fmt.Errorf("%s names %s=%s live and %s=%s in the file (the list is in another order): select the element by its %s with a jq expression",
					Pointer(p[:i+1]), key, lk, key, fk, key)
			}
		}
		l, f = ll[e.Index], fl[e.Index]
	}
	return nil
}
