package ignore

import "github.com/kapply/kapply/pkg/fieldpath"

// changedLeaves are the paths of the leaves that differ between a and b,
// lists keyed as managedFields key them (fieldpath.ByKey) so that each
// leaf's owners and cause can be read. The fields every write or the
// creation sets (diff hides them) and the last-applied records are not
// classified.
func changedLeaves(a, b map[string]any) []fieldpath.Path {
	return fieldpath.CompareObjects(a, b, fieldpath.CompareOptions{Depth: fieldpath.ByKey, Skip: isNoise}).Paths()
}

func isNoise(p fieldpath.Path) bool {
	return fieldpath.IsBookkeeping(p, fieldpath.EveryWrite|fieldpath.OnCreate)
}
