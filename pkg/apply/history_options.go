package apply

import "github.com/kapply/kapply/pkg/history"

// HistoryOptions, with an ApplySet (prune.Options.ApplySet), record each
// apply that changes the set's configuration as a revision (see
// pkg/history): stored next to the parent, in objects of its kind (a
// Secret or a ConfigMap), or in Secrets of Namespace for a parent of
// another kind.
type HistoryOptions struct {
	// Limit is how many revisions are kept; 0 keeps none (nothing is
	// recorded and the set's revisions are deleted, with a warning).
	Limit int
	// ChangeCause is recorded with the revision (--change-cause).
	ChangeCause string
	// Namespace holds the revisions of a parent that is neither a Secret
	// nor a ConfigMap (--history-namespace); such a parent, if namespaced,
	// must live there too: an ownerReference names an owner of its own
	// namespace.
	Namespace string
	// User is who applies when the server does not answer a
	// SelfSubjectReview: the kubeconfig's user.
	User string
	// Warn, when set, is given what the user should know (Limit 0).
	Warn func(msg string)
}

// DefaultHistoryLimit is how many revisions a set keeps by default.
const DefaultHistoryLimit = 10

// Revision is one recorded apply of an ApplySet (history.Revision).
type Revision = history.Revision

// ApplySetRef names an ApplySet: the parent reference
// [RESOURCE[.GROUP]/]NAME (--applyset), the namespace of a namespaced
// parent, and where the revisions of a parent that is neither a Secret nor
// a ConfigMap are (HistoryOptions.Namespace).
type ApplySetRef struct {
	ApplySet         string
	Namespace        string
	HistoryNamespace string
}
