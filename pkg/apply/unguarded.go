package apply

import (
	"fmt"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// unguarded says which value the files' patch replaces whole that the
// saved item neither records (Replaced) nor names in a change ("" when
// none): Verify guards only what the item records, so a plan edited to
// drop a replaced entry would overwrite what another writer added there
// since. The item's patch is the files' (checked before), so fresh, the
// files' item against the same live object, has the entries it must have.
func unguarded(saved, fresh plan.Item) string {
	guarded := map[string]bool{}
	for _, r := range saved.Replaced {
		guarded[r.Path.String()] = true
	}
	for _, c := range saved.Changes {
		guarded[c.Path.String()] = true
	}
	var missing []fieldpath.Path
	for _, r := range fresh.Replaced {
		if !guarded[r.Path.String()] {
			missing = append(missing, r.Path)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("its patch replaces %s whole, and the plan does not record the live value it was made against", joinPaths(missing))
}
