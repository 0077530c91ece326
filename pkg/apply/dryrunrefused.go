package apply

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DryRunRefusedError is the server's 403 to a dry run of a write: the user
// may read the object but not write it, and a dry run needs the write's
// permission. A preview with read access only is computed locally
// (cluster.ClientDryRun); nothing falls back to it silently.
type DryRunRefusedError struct {
	// Ref is ObjectRef of the object.
	Ref string
	Err error
}

func (e *DryRunRefusedError) Error() string {
	return fmt.Sprintf("the server refused the dry run of %s (forbidden: %v)", e.Ref, e.Err)
}

func (e *DryRunRefusedError) Unwrap() error { return e.Err }

// refusedDryRun is err as a *DryRunRefusedError when it is the server's
// 403 to a dry run (dryRun set) of a write of obj; err otherwise.
func refusedDryRun(obj *unstructured.Unstructured, dryRun []string, err error) error {
	if len(dryRun) == 0 || !apierrors.IsForbidden(err) {
		return err
	}
	return &DryRunRefusedError{Ref: ObjectRef(obj), Err: err}
}
