package delete

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/pkg/cluster"
)

// Options configure the deletion of declared objects (pkg/apply's
// Applier.Delete, `kapply delete`).
type Options struct {
	// Namespace is given to namespaced objects that name none; empty
	// means "default". EnforceNamespace makes an object in another
	// namespace an error, as kubectl does when -n is given.
	Namespace        string
	EnforceNamespace bool
	// Cascade is how dependents go: background (the server's default),
	// foreground or orphan.
	Cascade metav1.DeletionPropagation
	// Wait makes each deletion wait, bounded by Timeout, until the object
	// is gone.
	Wait    bool
	Timeout time.Duration
	// IgnoreNotFound makes an object that does not exist a skip, not a
	// failure.
	IgnoreNotFound bool
	DryRun         cluster.DryRun
}
