package lastapplied

import (
	"bytes"
	"crypto/hmac"
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
	"github.com/kapply/kapply/pkg/shown"
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

// A redacted value reads "kapply:hmac:KEYID:SALT:SUM": KEYID names the
// namespace's DigestKey (8 hex digits), SALT is a 12-byte salt in unpadded
// base64url (16 characters), SUM the first 12 bytes of HMAC-SHA256 under
// the key of (salt, key, value), in hex. value is the bytes the entry
// stands for — a data value base64-decoded, a stringData value as it is —
// so a key moved between data and stringData keeps its digest, and status
// can compare the live data with either. 62 characters: under elideOver,
// so a compact record never elides it.
//
// The key is not in the record: whoever reads the record (a backup, an
// audit log, a metadata-only list) has nothing to test a guessed value
// against. The salt is stored with the digest, chosen at random when the
// object is first recorded and kept on every later apply (else each apply
// would write a new record); it makes equal values in two objects, or
// under two keys, give different digests.
//
// Older kapply wrote "kapply:sha256:SALT:SUM" (SUM: the first 16 bytes of
// SHA-256(salt, key, 0, value)), which anyone could test guesses against.
// Such digests are still read and matched (the next apply replaces them);
// none is written any more.
const (
	redactedPrefix = "kapply:hmac:"
	legacyPrefix   = "kapply:sha256:"
	saltLen        = 12
	sumLen         = 12
	legacySumLen   = 16
	keyIDLen       = 4
)

type salt [saltLen]byte

// digestValue is the redacted form of the value of key, under k.
func digestValue(k DigestKey, s salt, key string, value []byte) string {
	sum := k.mac([]byte("kapply.dev/secret-value"), s[:], []byte(key), value)
	return redactedPrefix + k.id + ":" + base64.RawURLEncoding.EncodeToString(s[:]) + ":" + hex.EncodeToString(sum[:sumLen])
}

// legacyDigest is the unkeyed digest older kapply wrote.
func legacyDigest(s salt, key string, value []byte) string {
	h := sha256.New()
	h.Write(s[:])
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(value)
	return legacyPrefix + base64.RawURLEncoding.EncodeToString(s[:]) + ":" + hex.EncodeToString(h.Sum(nil)[:legacySumLen])
}

// redacted is a parsed redacted value; keyID is "" for a legacy one.
type redacted struct {
	keyID string
	salt  salt
	text  string
}

// parseRedacted reads v as a redacted value, keyed or legacy.
func parseRedacted(v any) (redacted, bool) {
	text, ok := v.(string)
	if !ok {
		return redacted{}, false
	}
	r := redacted{text: text}
	var rest string
	wantSum := 2 * sumLen
	if rest, ok = strings.CutPrefix(text, redactedPrefix); ok {
		var id string
		if id, rest, ok = strings.Cut(rest, ":"); !ok || len(id) != 2*keyIDLen || !isHex(id) {
			return redacted{}, false
		}
		r.keyID = id
	} else if rest, ok = strings.CutPrefix(text, legacyPrefix); ok {
		wantSum = 2 * legacySumLen
	} else {
		return redacted{}, false
	}
	encoded, sum, ok := strings.Cut(rest, ":")
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	if !ok || err != nil || len(raw) != saltLen || len(sum) != wantSum || !isHex(sum) {
		return redacted{}, false
	}
	copy(r.salt[:], raw)
	return r, true
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// matches reports whether value is what r was made from: a keyed digest
// under k (another key, or none, matches nothing), a legacy one by its
// salt alone.
func (r redacted) matches(k DigestKey, key string, value []byte) bool {
	if r.keyID == "" {
		return legacyDigest(r.salt, key, value) == r.text
	}
	return !k.IsZero() && k.id == r.keyID && hmac.Equal([]byte(digestValue(k, r.salt, key, value)), []byte(r.text))
}

// Hidden stands for a Secret value where no digest could be made: a
// plain record viewed without the namespace's digest key. It matches no
// value.
const Hidden = "kapply:hidden"

// IsRedacted reports whether v is a Secret value as a redacted record
// keeps it: a digest (keyed, or an older kapply's), or Hidden.
func IsRedacted(v any) bool {
	_, ok := parseRedacted(v)
	return ok || v == Hidden
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
// redacted under s and k (Hidden when k is zero). Nulls (deletions in a
// file) and values redacted already (an edited record) stay. obj is not
// modified.
func redactSecret(obj map[string]any, s salt, k DigestKey) map[string]any {
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
			switch {
			case v == nil || IsRedacted(v):
			case k.IsZero():
				masked[key] = Hidden
			default:
				masked[key] = digestValue(k, s, key, secretBytes(field, v))
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

// redactedCopy returns obj with its Secret values redacted under k (see
// saltFor); obj itself when it is not a v1 Secret. A Secret with a value
// to redact needs a key.
func redactedCopy(obj, live *unstructured.Unstructured, k DigestKey) (*unstructured.Unstructured, error) {
	if !secretmask.IsSecret(obj.Object) {
		return obj, nil
	}
	if k.IsZero() && hasPlainValue(obj.Object) {
		return nil, fmt.Errorf("recording Secret %s: %w", shown.Text(obj.GetName()), ErrNoDigestKey)
	}
	s, err := saltFor(obj.Object, live)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: redactSecret(obj.Object, s, k)}, nil
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
