package apply

import "github.com/kapply/kapply/pkg/history"

// Revision is one recorded apply of an ApplySet (history.Revision).
type Revision = history.Revision

// ApplySetRef names an ApplySet: the parent reference
// [RESOURCE[.GROUP]/]NAME (--applyset), the namespace of a namespaced
// parent, and where the revisions of a parent that is neither a Secret nor
// a ConfigMap are (history.Options.Namespace).
type ApplySetRef struct {
	ApplySet         string
	Namespace        string
	HistoryNamespace string
}
