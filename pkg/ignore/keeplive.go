package ignore

import (
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/merge"
)

// KeepLive is the file Respect gave a plan, made again from the fields it
// kept (a plan item's keptLive) instead of the rules, which a saved plan
// does not record: a copy of file in which each kept field holds live's
// value, or is absent where live lacks it, with Respect's care for
// stringData and the metadata the server writes. apply --plan re-plans an
// item from it to check the plan's patch is what the files give.
func KeepLive(file, live map[string]any, kept []fieldpath.Path) map[string]any {
	out := merge.DeepCopy(file).(map[string]any)
	var drop []fieldpath.Path
	for _, p := range kept {
		v, err := p.Lookup(live)
		if err != nil || !setPath(out, p, merge.DeepCopy(v)) {
			drop = append(drop, p)
		}
	}
	removeAll(out, drop)
	if out["apiVersion"] == "v1" && out["kind"] == "Secret" {
		dropStringDataOf(out, kept)
	}
	keepServerFieldsOut(out, file)
	return out
}
