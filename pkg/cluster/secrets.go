package cluster

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Secrets are the Secrets an operation knows — the objects it was given
// and the live objects it read — whose values no text it hands out may
// print: the server's errors and warnings quote what a request sent or
// what an admission policy or webhook saw (a messageExpression quoting
// data.password, a field error's `Invalid value: "..."`). Its Text and
// Error mask them (pkg/secretmask finds the values in text). The zero
// value knows none; nil too. Safe for concurrent use.
type Secrets struct {
	masker secretmask.Masker
}

// Add adds the v1 Secrets among objs (others and nil ones are skipped),
// each with the values of its last-applied record: a live object's record
// may hold values neither the file nor the live data hold any more.
func (s *Secrets) Add(objs ...*unstructured.Unstructured) {
	for _, obj := range objs {
		if obj == nil || !secretmask.IsSecret(obj.Object) {
			continue
		}
		s.masker.Add(obj.Object)
		// A record that cannot be read cannot be quoted either.
		if record, err := lastapplied.Read(obj); err == nil && record != nil {
			s.masker.Add(record)
		}
	}
}

// Text is text with the values of the known Secrets masked.
func (s *Secrets) Text(text string) string {
	if s == nil {
		return text
	}
	return s.masker.Text(text)
}

// Texts are texts each masked (a new slice; nil stays nil).
func (s *Secrets) Texts(texts []string) []string {
	if texts == nil {
		return nil
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = s.Text(t)
	}
	return out
}

// Error is err said with the values of the known Secrets masked; it still
// unwraps to err, so errors.Is and errors.As see the same chain — but the
// server's status (errors.As to *apierrors.StatusError or
// apierrors.APIStatus) is a copy with its messages masked too. Another
// error of the chain a caller unwraps and prints is printed unmasked. nil
// stays nil, and an error that quotes no value is returned as it is.
func (s *Secrets) Error(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	masked := s.Text(text)
	if masked == text {
		return err
	}
	return &MaskedError{text: masked, err: err, secrets: s}
}

// MaskedError is an error whose text has Secret values masked.
type MaskedError struct {
	text    string
	err     error
	secrets *Secrets
}

func (e *MaskedError) Error() string { return e.text }
func (e *MaskedError) Unwrap() error { return e.err }

// As gives errors.As, for a target of type *apierrors.StatusError or
// apierrors.APIStatus, a copy of the chain's status error with its
// message and its causes' masked; errors.As then stops here, before the
// status as the server wrote it. Any other target finds the chain's own.
func (e *MaskedError) As(target any) bool {
	var status *apierrors.StatusError
	if !errors.As(e.err, &status) {
		return false
	}
	switch t := target.(type) {
	case **apierrors.StatusError:
		*t = e.maskedStatus(status)
	case *apierrors.APIStatus:
		*t = e.maskedStatus(status)
	default:
		return false
	}
	return true
}

func (e *MaskedError) maskedStatus(status *apierrors.StatusError) *apierrors.StatusError {
	s := *status.ErrStatus.DeepCopy()
	s.Message = e.secrets.Text(s.Message)
	if s.Details != nil {
		for i := range s.Details.Causes {
			s.Details.Causes[i].Message = e.secrets.Text(s.Details.Causes[i].Message)
		}
	}
	return &apierrors.StatusError{ErrStatus: s}
}

// MaskError is err with the values of the Secrets among objs (and of their
// records) masked, for one error about known objects (see Secrets.Error).
func MaskError(err error, objs ...*unstructured.Unstructured) error {
	if err == nil {
		return nil
	}
	var s Secrets
	s.Add(objs...)
	return s.Error(err)
}
