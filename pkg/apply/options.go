package apply

import (
	"time"

	"github.com/kapply/kapply/pkg/schema"
)

// Options configure one run of apply.
type Options struct {
	Files Files
	// Namespace is given to namespaced objects that name none.
	Namespace string
	// EnforceNamespace makes an object in another namespace an error, as
	// kubectl does when -n is given.
	EnforceNamespace bool
	// FieldManager is recorded in managedFields for kapply's writes.
	FieldManager string
	// Timeout bounds the wait for CRDs of the run to become established.
	Timeout time.Duration
	// MergeKeys are user-declared keys for lists the schemas leave atomic.
	MergeKeys []schema.Override
}

// DefaultFieldManager is the field manager kapply's writes are recorded under.
const DefaultFieldManager = "kapply"
