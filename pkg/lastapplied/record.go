package lastapplied

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/secretmask"
)

// Annotation is the key kubectl stores the last-applied configuration under.
const Annotation = corev1.LastAppliedConfigAnnotation

// Encode returns the last-applied record for a file's object: the object
// without the annotation, encoded as kubectl encodes it (the unstructured JSON
// scheme: keys sorted, a trailing newline). obj is not modified.
//
// kubectl does this in k8s.io/kubectl/pkg/util.GetModifiedConfiguration;
// that module may not enter ours (it drags in half of kubectl), so the few
// lines are repeated here and a test compares the bytes with kubectl's.
func Encode(obj *unstructured.Unstructured) ([]byte, error) {
	record, _, err := encode(obj)
	return record, err
}

// encode is Encode, and gives also the object it encoded: obj without the
// annotation, sharing every map but the two that lead to it.
func encode(obj *unstructured.Unstructured) ([]byte, map[string]any, error) {
	// Only the annotations change, on copies of the maps that lead to
	// them: the rest is encoded, never written, and a deep copy of every
	// object was a tenth of planning a large no-op apply.
	clean := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
	if metadata, ok := clean.Object["metadata"].(map[string]any); ok {
		clean.Object["metadata"] = maps.Clone(metadata)
	}
	annotations := clean.GetAnnotations()
	// kubectl records an empty annotations map when the file has none.
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, Annotation)
	clean.SetAnnotations(annotations)
	var buf bytes.Buffer
	if err := unstructured.UnstructuredJSONScheme.Encode(clean, &buf); err != nil {
		return nil, nil, fmt.Errorf("encoding last-applied configuration: %w", err)
	}
	return buf.Bytes(), clean.Object, nil
}

// WithRecord returns a copy of obj carrying record as its last-applied
// annotation: what kubectl sends when it creates or patches an object.
func WithRecord(obj *unstructured.Unstructured, record []byte) *unstructured.Unstructured {
	out := obj.DeepCopy()
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[Annotation] = string(record)
	out.SetAnnotations(annotations)
	return out
}

// withRecordShared is WithRecord sharing every value of obj but the maps
// that lead to the annotations (see Recording.Shared).
func withRecordShared(obj *unstructured.Unstructured, record []byte) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
	if metadata, ok := out.Object["metadata"].(map[string]any); ok {
		out.Object["metadata"] = maps.Clone(metadata)
	}
	// GetAnnotations copies, SetAnnotations writes a new map.
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[Annotation] = string(record)
	out.SetAnnotations(annotations)
	return out
}

// SecretRecord says how a record keeps a v1 Secret's values (data and
// stringData).
type SecretRecord int

const (
	// RedactSecrets, the default, keeps each key and replaces its value by
	// a salted digest (see digestValue). Anyone who may read the object's
	// metadata may read the record; the digest tells the next apply which
	// keys the file dropped, and status whether a value changed, and gives
	// no value away.
	RedactSecrets SecretRecord = iota
	// PlainSecrets keeps the values as they are, as kubectl does.
	PlainSecrets
)

var secretRecordNames = map[SecretRecord]string{RedactSecrets: "redacted", PlainSecrets: "plain"}

func (s SecretRecord) String() string { return secretRecordNames[s] }

// ParseSecretRecord reads "redacted" or "plain".
func ParseSecretRecord(s string) (SecretRecord, error) {
	for mode, name := range secretRecordNames {
		if s == name {
			return mode, nil
		}
	}
	return 0, fmt.Errorf(`the Secret record must be "redacted" or "plain", not %q`, s)
}

// A redacted value reads "kapply:sha256:SALT:SUM": SALT the 12-byte salt
// in unpadded base64url (16 characters), SUM the first 16 bytes of
// SHA-256(salt, key, 0, value) in hex. value is the bytes the entry stands
// for — a data value base64-decoded, a stringData value as it is — so a
// key moved between data and stringData keeps its digest, and status can
// compare the live data with either. 63 characters: under elideOver, so a
// compact record never elides it.
//
// The salt is stored with the digest, chosen at random when the object is
// first recorded and kept on every later apply (else each apply would
// write a new record). Salts are public, as the digests are; what they
// give is uniqueness: no table computed once (or in another cluster)
// matches, and equal values in two objects, or under two keys, have
// different digests. The salt is not derived from the UID alone: the
// server assigns the UID when it creates the object, after the record is
// written, and a client dry run has none. What a salt cannot stop is
// someone who reads the record testing guesses at one value of one object;
// a value that must resist that is long and random (a generated key or
// token, not a word).
const (
	redactedPrefix = "kapply:sha256:"
	saltLen        = 12
	sumLen         = 16
)

type salt [saltLen]byte

// digestValue is the redacted form of the value of key.
func digestValue(s salt, key string, value []byte) string {
	h := sha256.New()
	h.Write(s[:])
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(value)
	return redactedPrefix + base64.RawURLEncoding.EncodeToString(s[:]) + ":" + hex.EncodeToString(h.Sum(nil)[:sumLen])
}

// redacted is a parsed redacted value.
type redacted struct {
	salt salt
	text string
}

// parseRedacted reads v as a redacted value.
func parseRedacted(v any) (redacted, bool) {
	text, ok := v.(string)
	if !ok {
		return redacted{}, false
	}
	rest, ok := strings.CutPrefix(text, redactedPrefix)
	if !ok {
		return redacted{}, false
	}
	encoded, sum, ok := strings.Cut(rest, ":")
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	if !ok || err != nil || len(raw) != saltLen || len(sum) != 2*sumLen {
		return redacted{}, false
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return redacted{}, false
	}
	r := redacted{text: text}
	copy(r.salt[:], raw)
	return r, true
}

// matches reports whether value is what r was made from.
func (r redacted) matches(key string, value []byte) bool {
	return digestValue(r.salt, key, value) == r.text
}

// IsRedacted reports whether v is a Secret value as a redacted record
// keeps it.
func IsRedacted(v any) bool {
	_, ok := parseRedacted(v)
	return ok
}

// secretBytes is what the value of a Secret's field (data or stringData)
// stands for: a data value decoded from base64 (as it is if it does not
// decode: the server refuses it anyway), a stringData value as it is.
func secretBytes(field string, v any) []byte {
	s, ok := v.(string)
	if !ok {
		return []byte(fmt.Sprint(v))
	}
	if field == "data" {
		if decoded, err := base64.StdEncoding.DecodeString(s); err == nil {
			return decoded
		}
	}
	return []byte(s)
}

// redactSecret returns obj with every value of data and stringData
// redacted under s. Nulls (deletions in a file) and values redacted
// already (an edited record) stay. obj is not modified.
func redactSecret(obj map[string]any, s salt) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, field := range secretmask.Fields() {
		values, ok := obj[field].(map[string]any)
		if !ok {
			continue
		}
		masked := make(map[string]any, len(values))
		for key, v := range values {
			masked[key] = v
			if v != nil && !IsRedacted(v) {
				masked[key] = digestValue(s, key, secretBytes(field, v))
			}
		}
		out[field] = masked
	}
	return out
}

// hasPlainValue reports a Secret value that is not redacted.
func hasPlainValue(obj map[string]any) bool {
	for _, field := range secretmask.Fields() {
		values, _ := obj[field].(map[string]any)
		for _, v := range values {
			if v != nil && !IsRedacted(v) {
				return true
			}
		}
	}
	return false
}

// redactedCopy returns obj with its Secret values redacted (see saltFor);
// obj itself when it is not a v1 Secret.
func redactedCopy(obj, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !secretmask.IsSecret(obj.Object) {
		return obj, nil
	}
	s, err := saltFor(obj.Object, live)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: redactSecret(obj.Object, s)}, nil
}

// saltFor chooses the salt of a redacted record of obj: the one obj's
// values carry already (an edited record); else the one live's record
// carries, so the same file gives the same record on every apply; else,
// when live exists, one derived from its UID (unique, and stable, so
// viewing a plain record shows the same digests each time); else a new
// random one (an object not created yet). live may be nil.
func saltFor(obj map[string]any, live *unstructured.Unstructured) (salt, error) {
	if s, ok := saltIn(obj); ok {
		return s, nil
	}
	if live != nil {
		// A record that cannot be read has no salt to keep; apply warns
		// about it and writes a new record.
		if record, err := Read(live); err == nil {
			if s, ok := saltIn(record); ok {
				return s, nil
			}
		}
		if uid := live.GetUID(); uid != "" {
			var s salt
			sum := sha256.Sum256([]byte("kapply.dev/secret-record-salt\x00" + string(uid)))
			copy(s[:], sum[:])
			return s, nil
		}
	}
	var s salt
	if _, err := rand.Read(s[:]); err != nil {
		return salt{}, fmt.Errorf("choosing the salt of the Secret's record: %w", err)
	}
	return s, nil
}

// saltIn returns the salt of the first redacted value of obj's data or
// stringData.
func saltIn(obj map[string]any) (salt, bool) {
	for _, field := range secretmask.Fields() {
		values, _ := obj[field].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(values)) {
			if r, ok := parseRedacted(values[key]); ok {
				return r.salt, true
			}
		}
	}
	return salt{}, false
}
