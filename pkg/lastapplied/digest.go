package lastapplied

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// DigestKey is the key of the digests kapply writes of a Secret's values
// (in a record, in a saved plan): an HMAC-SHA256 key that lives in the
// Secret's namespace, in the Secret DigestKeySecret (pkg/cluster reads and
// creates it). Whoever holds a record or a plan file but may not read
// Secrets in that namespace has nothing to test a guessed value against;
// whoever may read them reads the values anyway. The zero DigestKey is no
// key: nothing is redacted or matched under it.
type DigestKey struct {
	id     string
	secret []byte
}

const (
	// DigestKeySecret is the name of the Secret holding a namespace's key,
	// under DigestKeyField.
	DigestKeySecret = "kapply-digest-key"
	DigestKeyField  = "key"
	// DigestKeyLen is the length of a key kapply draws; shorter keys are
	// refused.
	DigestKeyLen = 32
)

// ErrNoDigestKey reports a Secret value to redact or check without the
// namespace's digest key.
var ErrNoDigestKey = errors.New("no digest key for the Secret's namespace")

// NewDigestKey returns the key of secret, the bytes stored in the
// namespace's DigestKeySecret.
func NewDigestKey(secret []byte) (DigestKey, error) {
	if len(secret) < DigestKeyLen {
		return DigestKey{}, fmt.Errorf("the digest key is %d bytes, fewer than %d", len(secret), DigestKeyLen)
	}
	// The ID names the key in each digest (a digest made under another
	// key is told apart from a changed value); from a 32-byte random key
	// its first 4 bytes of a hash tell nothing.
	sum := sha256.Sum256(append([]byte("kapply.dev/digest-key-id\x00"), secret...))
	return DigestKey{id: hex.EncodeToString(sum[:keyIDLen]), secret: append([]byte(nil), secret...)}, nil
}

// RandomDigestKey draws a new key (for the namespace's DigestKeySecret).
func RandomDigestKey() ([]byte, error) {
	b := make([]byte, DigestKeyLen)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("drawing a digest key: %w", err)
	}
	return b, nil
}

// ID names the key in the digests made under it ("" for no key).
func (k DigestKey) ID() string { return k.id }

// IsZero reports no key.
func (k DigestKey) IsZero() bool { return len(k.secret) == 0 }

// mac is HMAC-SHA256 under k of the parts, each length-prefixed.
func (k DigestKey) mac(parts ...[]byte) []byte {
	h := hmac.New(sha256.New, k.secret)
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return h.Sum(nil)
}

// Sum is a keyed digest of data, "hmac:ID:HEX", for what may hold a
// Secret's values without being one (a plan's digest of a Secret's
// last-applied annotations); purpose separates the uses.
func (k DigestKey) Sum(purpose string, data []byte) string {
	return "hmac:" + k.id + ":" + hex.EncodeToString(k.mac([]byte(purpose), data))
}

// Salt is the salt of a set of redacted Secret values, for callers outside
// this package that keep a Secret's values as digests too (a saved plan):
// one rule for every digest kapply writes, checked by MatchesRedacted.
type Salt struct{ s salt }

// NewSalt returns a random salt: equal values elsewhere get other digests.
func NewSalt() (Salt, error) {
	var s Salt
	if _, err := rand.Read(s.s[:]); err != nil {
		return Salt{}, fmt.Errorf("choosing the salt of Secret digests: %w", err)
	}
	return s, nil
}

// Redact returns the digest under k of the value v of the Secret's
// field.key (field "data": v is base64 and its decoded bytes count;
// "stringData": v as it is). MatchesRedacted(k, digest, field, key, v)
// holds, also for the same value given under the other field.
func (s Salt) Redact(k DigestKey, field, key string, v any) (string, error) {
	if k.IsZero() {
		return "", ErrNoDigestKey
	}
	return digestValue(k, s.s, key, secretBytes(field, v)), nil
}

// MatchesRedacted reports whether recorded is a redacted digest of the
// Secret entry field.key whose value is v (data as stored, base64;
// stringData as text): a digest under k, or one written by kapply before
// keyed digests (unkeyed, salted SHA-256), which needs no key.
func MatchesRedacted(k DigestKey, recorded any, field, key string, v any) bool {
	r, ok := parseRedacted(recorded)
	return ok && r.matches(k, key, secretBytes(field, v))
}

// DigestKeyOf reports the ID of the key recorded was made under ("" for
// a digest of an older kapply, which needs none), and whether recorded
// is a digest at all.
func DigestKeyOf(recorded any) (string, bool) {
	r, ok := parseRedacted(recorded)
	return r.keyID, ok
}
