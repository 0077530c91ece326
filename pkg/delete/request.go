package delete

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/wait"
)

// Request is one DELETE's settings.
type Request struct {
	// Cascade is the propagation policy; empty leaves it to the server.
	Cascade metav1.DeletionPropagation
	// UID, when set, makes the deletion hit only the object of that UID
	// (the one that was read), never one re-created under its name.
	UID types.UID
	// ResourceVersion, when set with UID, also refuses an object changed
	// since it was read (a plan's precondition).
	ResourceVersion string
	// GracePeriod, when set, is the grace period in seconds.
	GracePeriod *int64
	// DryRun, when cluster.ServerDryRun, sends the request with
	// dryRun=All (a client dry run sends no request).
	DryRun cluster.DryRun
}

// Options are the DELETE's metav1.DeleteOptions.
func (r Request) Options() metav1.DeleteOptions {
	opts := metav1.DeleteOptions{DryRun: r.DryRun.Param(), GracePeriodSeconds: r.GracePeriod}
	if r.Cascade != "" {
		cascade := r.Cascade
		opts.PropagationPolicy = &cascade
	}
	if r.UID != "" {
		uid := r.UID
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
		if r.ResourceVersion != "" {
			rv := r.ResourceVersion
			opts.Preconditions.ResourceVersion = &rv
		}
	}
	return opts
}

// GoneAlready says that a DELETE's error means the object is gone, which
// is what the deletion wants: a 404 after an earlier attempt whose answer
// was lost (lostAnswer), or a 404 while pruning (another client, such as
// a concurrent run on the same ApplySet, deleted it since it was listed;
// kubectl stops its prune with an error here).
func GoneAlready(err error, lostAnswer, pruning bool) bool {
	return apierrors.IsNotFound(err) && (lostAnswer || pruning)
}

// Describe says where an object a deletion waited on stands: its status,
// reason and message.
func Describe(r wait.Result) string {
	text := string(r.Status)
	if r.Reason != "" {
		text += ": " + r.Reason
	}
	if r.Message != "" {
		text += ": " + r.Message
	}
	return text
}
