package apply

import (
	"fmt"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
)

// malformedRecordError refuses an object whose kubectl record is not a
// JSON object, as kubectl apply does (exit 1, "invalid JSON document"):
// the record is the only account of which fields the last apply set, and
// treating it as absent would keep, unannounced, every field the file
// dropped since. The other objects of the run are still applied.
func malformedRecordError(o *load.Object, err error) error {
	return fmt.Errorf("%w; kubectl apply refuses the object too (invalid JSON document): correct the annotation or remove it "+
		"(kubectl annotate %s %s-); without it the next apply deletes nothing",
		err, o.Ref(), lastapplied.Annotation)
}
