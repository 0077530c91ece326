package history

// Options, with an ApplySet, record each run that changes the set's
// configuration as a revision: stored next to the parent, in objects of its
// kind (a Secret or a ConfigMap), or in Secrets of Namespace for a parent
// of another kind.
type Options struct {
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

// DefaultLimit is how many revisions a set keeps by default.
const DefaultLimit = 10
