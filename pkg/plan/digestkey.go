package plan

import (
	"errors"
	"fmt"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// ErrDigestKey refuses a Secret item whose digests cannot be checked: no
// digest key was given, or the namespace's key is not the one the plan
// was made under.
var ErrDigestKey = errors.New("the Secret's digests cannot be checked")

// IsSecret reports whether the item's object is a core v1 Secret, whose
// values an encoded plan keeps as digests under its namespace's key.
func (id ID) IsSecret() bool { return id.isSecret() }

// checkDigestKey: a Secret item to verify or restore has the digest key
// it was planned under (DigestKeyID, when the plan names one).
func (it Item) checkDigestKey() error {
	switch {
	case !it.ID.isSecret() || it.Action == Prune || it.Action == Delete:
		return nil
	case it.DigestKey.IsZero():
		return fmt.Errorf("%s: %w: no digest key of namespace %s was given", it.ID, ErrDigestKey, it.ID.Namespace)
	case it.DigestKeyID != "" && it.DigestKeyID != it.DigestKey.ID():
		return fmt.Errorf("%s: %w: the plan was made under digest key %s, and namespace %s holds key %s in Secret %s "+
			"(the plan was made where no key could be stored, or the key was replaced since): run kapply plan again",
			it.ID, ErrDigestKey, it.DigestKeyID, it.ID.Namespace, it.DigestKey.ID(), lastapplied.DigestKeySecret)
	}
	return nil
}
