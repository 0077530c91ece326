package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Secret values are never printed. Objects a command prints whole have
// them masked (maskObjects); errors and warnings about a Secret, which may
// quote a value (the server's message, an admission webhook's), have every
// value the command knows of masked (maskEventSecrets, maskedError). The
// masks of objects are pkg/diff's, as in diff, status and adopt; values
// are found in text by pkg/secretmask, the one implementation.

// maskObjects returns objs with each Secret's values masked.
func maskObjects(objs []runtime.Object) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		out[i] = obj
		if u, ok := obj.(*unstructured.Unstructured); ok && u != nil {
			out[i] = &unstructured.Unstructured{Object: diff.MaskSecret(u.Object)}
		}
	}
	return out
}

// maskEventSecrets returns events whose error and warnings have the values
// of the event's Secret masked: the file's, the live object's and those of
// its last-applied record.
//
// Every event a command prints passes here, so here too the library's
// option names become flags (eventsWithFlagNames).
func maskEventSecrets(events []apply.Event) []apply.Event {
	events = eventsWithFlagNames(events)
	out := make([]apply.Event, len(events))
	for i, ev := range events {
		out[i] = ev
		if ev.Err == nil && len(ev.Warnings) == 0 {
			continue
		}
		var objs []*unstructured.Unstructured
		if ev.Object != nil {
			objs = append(objs, ev.Object)
		}
		objs = append(objs, ev.Live, ev.Result)
		secrets := secretsOf(objs...)
		if len(secrets) == 0 {
			continue
		}
		out[i].Err = maskedError(ev.Err, secrets...)
		out[i].Warnings = make([]string, len(ev.Warnings))
		for j, w := range ev.Warnings {
			out[i].Warnings[j] = secretmask.Text(w, secrets...)
		}
	}
	return out
}

// secretsOf returns the contents of the v1 Secrets among objs (nil ones
// skipped), each followed by its last-applied record when it has one.
func secretsOf(objs ...*unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	for _, obj := range objs {
		if obj == nil || !secretmask.IsSecret(obj.Object) {
			continue
		}
		out = append(out, obj.Object)
		// A record that cannot be read cannot be quoted either.
		if record, err := lastapplied.Read(obj); err == nil && record != nil {
			out = append(out, record)
		}
	}
	return out
}

// maskedError is err with the values of secrets masked in its text; it
// still unwraps to err. nil stays nil.
func maskedError(err error, secrets ...map[string]any) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	return &secretMaskedError{text: secretmask.Text(err.Error(), secrets...), err: err}
}

// secretMaskedError is an error shown with another text: Secret values
// masked, options named as flags.
type secretMaskedError struct {
	text string
	err  error
}

func (e *secretMaskedError) Error() string { return e.text }
func (e *secretMaskedError) Unwrap() error { return e.err }

// parseSecretRecord reads apply's --secret-record; empty (a command that
// has no such flag, as diff) is the default, redacted.
func parseSecretRecord(s string) (lastapplied.SecretRecord, error) {
	if s == "" {
		return lastapplied.RedactSecrets, nil
	}
	mode, err := lastapplied.ParseSecretRecord(s)
	if err != nil {
		return 0, fmt.Errorf("--secret-record: %w", err)
	}
	return mode, nil
}
