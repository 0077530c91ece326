package apply

import "time"

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
}

// DefaultFieldManager is the field manager kapply's writes are recorded under.
const DefaultFieldManager = "kapply"
