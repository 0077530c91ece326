package lastapplied

import (
	"crypto/rand"
	"fmt"
)

// Salt is the salt of a set of redacted Secret values, for callers outside
// this package that keep a Secret's values as digests too (a saved plan):
// one rule for every digest kapply writes, checked by MatchesRedacted.
type Salt struct{ s salt }

// NewSalt returns a random salt: digests under it match no table computed
// in advance, and equal values elsewhere get other digests.
func NewSalt() (Salt, error) {
	var s Salt
	if _, err := rand.Read(s.s[:]); err != nil {
		return Salt{}, fmt.Errorf("choosing the salt of Secret digests: %w", err)
	}
	return s, nil
}

// Redact returns the digest of the value v of the Secret's field.key
// (field "data": v is base64 and its decoded bytes count; "stringData":
// v as it is). MatchesRedacted(digest, field, key, v) holds, also for the
// same value given under the other field.
func (s Salt) Redact(field, key string, v any) string {
	return digestValue(s.s, key, secretBytes(field, v))
}
