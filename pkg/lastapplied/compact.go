package lastapplied

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

const (
	// CompactAnnotation holds the compact record of an object whose full
	// record would pass the API server's annotation size limit: the record
	// gzipped and base64-encoded (see compactRecord). Records written before
	// packing are plain JSON and are still read.
	CompactAnnotation = "kapply.dev/last-applied-compact"
	// AnnotationLimit is the API server's limit on the total size of an
	// object's annotations, keys and values (262144 bytes).
	AnnotationLimit = 256 * 1024
	// elideOver is the length above which a string that cannot identify a
	// list element is replaced by a digest when the packed record alone is
	// too large.
	elideOver = 64
)

// ErrTooLarge reports an object whose record does not fit even compacted.
var ErrTooLarge = fmt.Errorf("the last-applied record passes the API server's %d-byte annotation limit even compacted", AnnotationLimit)

// Attach returns a copy of obj carrying its last-applied record, as kubectl
// would write it. When that record would pass the API server's annotation
// limit — where kubectl fails with "metadata.annotations: Too long" — the
// copy carries instead a compact record under CompactAnnotation (see
// compactRecord), from which the next apply deletes the fields and elements
// the file drops, as from the full one. compacted reports which record was
// written. A Secret's values are recorded redacted, under a new salt: see
// AttachWith.
func Attach(obj *unstructured.Unstructured) (out *unstructured.Unstructured, compacted bool, err error) {
	return AttachWith(obj, Recording{})
}

// Recording says how AttachWith records an object.
type Recording struct {
	// Secrets says how a Secret's values are kept: redacted (the zero value)
	// or plain.
	Secrets SecretRecord
	// Live is the object on the server, nil when it does not exist yet: a
	// redacted record keeps the salt of its record (see saltFor).
	Live *unstructured.Unstructured
	// Key is the digest key of the Secret's namespace, which a redacted
	// record of a Secret needs.
	Key DigestKey
	// Shared gives an object that shares every value of obj but the maps
	// leading to its annotations, for a caller that never modifies it
	// below metadata.annotations (a three-way merge reads it): a deep copy
	// of every object was 2-3% of the CPU of a no-op apply.
	Shared bool
}

// AttachWith is Attach with a Secret's values recorded as rec says; the
// object itself keeps them.
func AttachWith(obj *unstructured.Unstructured, rec Recording) (out *unstructured.Unstructured, compacted bool, err error) {
	a, err := AttachRecord(obj, rec)
	return a.Obj, a.Compacted, err
}

// Attached is an object with its record attached, by AttachRecord.
type Attached struct {
	// Obj is a copy of the object carrying the record.
	Obj *unstructured.Unstructured
	// Compacted tells the record is the compact one.
	Compacted bool
	// record is the full record attached, and recorded the object it
	// encodes; both nil when compacted.
	record   []byte
	recorded map[string]any
}

// AttachRecord is AttachWith, giving what LastApplied needs.
func AttachRecord(obj *unstructured.Unstructured, rec Recording) (Attached, error) {
	source := obj
	if rec.Secrets == RedactSecrets {
		var err error
		if source, err = redactedCopy(obj, rec.Live, rec.Key); err != nil {
			return Attached{}, err
		}
	}
	record, recorded, err := encode(source)
	if err != nil {
		return Attached{}, err
	}
	room := AnnotationLimit - otherAnnotationsSize(obj)
	if len(Annotation)+len(record) <= room {
		withRecord := WithRecord
		if rec.Shared {
			withRecord = withRecordShared
		}
		a := Attached{Obj: withRecord(obj, record), record: record, recorded: recorded}
		if bytes.Contains(record, []byte(`\ufffd`)) {
			// A string that is not UTF-8 was written with U+FFFD in
			// its place (or the text \ufffd was): what the record
			// decodes to is not what it was encoded from.
			a.recorded = nil
		}
		return a, nil
	}
	compact, err := compactRecord(record, room-len(CompactAnnotation))
	if err != nil {
		return Attached{}, err
	}
	out := obj.DeepCopy()
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, Annotation)
	annotations[CompactAnnotation] = string(compact)
	out.SetAnnotations(annotations)
	return Attached{Obj: out, Compacted: true}, nil
}

// LastApplied is Read(live), except that when live's record is, byte for
// byte, the one a attached — the file has not changed since it was last
// applied: every object of a no-op apply — the record is not decoded again:
// the object it was encoded from stands for it. Decoding would give that
// object back (objects are loaded through JSON, as records are read), and
// even for an object that is not, a record equal to the file is what the
// three-way merge needs: nothing to delete. The returned map shares the
// file's values and must not be modified.
func (a Attached) LastApplied(live *unstructured.Unstructured) (map[string]any, error) {
	if a.recorded != nil {
		if raw, ok, _ := unstructured.NestedString(live.Object, "metadata", "annotations", Annotation); ok && raw == string(a.record) {
			return a.recorded, nil
		}
	}
	return Read(live)
}

// otherAnnotationsSize counts the file's own annotations the way the API
// server does, leaving out both records.
func otherAnnotationsSize(obj *unstructured.Unstructured) int {
	n := 0
	for k, v := range obj.GetAnnotations() {
		if k != Annotation && k != CompactAnnotation {
			n += len(k) + len(v)
		}
	}
	return n
}

// compactRecord returns the compact record that fits in room bytes: the
// full record packed (gzip, base64) — exact, so the engine and drift see
// what the full record holds; CRDs, all structure and prose, pack 4 to 35
// times smaller — or, when even that is too large (incompressible values),
// the record with its long strings replaced by digests (elide), packed.
func compactRecord(record []byte, room int) ([]byte, error) {
	packed, err := pack(record)
	if err != nil || len(packed) <= room {
		return packed, err
	}
	elided, err := elideRecord(record)
	if err != nil {
		return nil, err
	}
	if packed, err = pack(elided); err != nil {
		return nil, err
	}
	if len(packed) > room {
		return nil, fmt.Errorf("%w (%d bytes past it)", ErrTooLarge, len(packed)-room)
	}
	return packed, nil
}

func elideRecord(record []byte) ([]byte, error) {
	var value any
	if err := json.Unmarshal(record, &value); err != nil {
		return nil, fmt.Errorf("compacting last-applied configuration: %w", err)
	}
	elided, err := json.Marshal(elide(value, false))
	if err != nil {
		return nil, fmt.Errorf("compacting last-applied configuration: %w", err)
	}
	return elided, nil
}

// elide replaces by a digest every string longer than elideOver that
// cannot identify a list element, keeping the structure: map keys, list
// lengths and order, short values. What identifies elements stays whole: the
// scalar items of a list (values of a set list) and the scalar fields of an
// element of a list (its merge keys, one or several). keep marks a value in
// such a place.
func elide(v any, keep bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = elide(item, false)
		}
	case []any:
		for i, item := range v {
			v[i] = elideItem(item)
		}
	case string:
		if len(v) > elideOver && !keep {
			return digestOf(v)
		}
	}
	return v
}

// elideItem compacts one element of a list: a scalar item is kept, and so
// are the scalar fields of an object item.
func elideItem(item any) any {
	m, isMap := item.(map[string]any)
	if !isMap {
		return elide(item, true)
	}
	for k, field := range m {
		m[k] = elide(field, true)
	}
	return m
}

// digestOf is how the compact record keeps a long string; other values have
// no digest.
func digestOf(v any) any {
	s, ok := v.(string)
	if !ok || len(s) <= elideOver {
		return nil
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// DropStale marks for deletion, with null in the file's annotations, the
// kind of record (full or compact) that live still carries but file no
// longer uses, so Read never prefers a stale record. file must come from
// Attach, which always gives it an annotations map.
func DropStale(file, live *unstructured.Unstructured) {
	stale := CompactAnnotation
	if _, compact := file.GetAnnotations()[CompactAnnotation]; compact {
		stale = Annotation
	}
	if _, ok := live.GetAnnotations()[stale]; !ok {
		return
	}
	metadata, _ := file.Object["metadata"].(map[string]any)
	if annotations, ok := metadata["annotations"].(map[string]any); ok {
		annotations[stale] = nil
	}
}
