package lastapplied

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"golang.org/x/sync/semaphore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A compact record is kapply's own annotation, but whoever may annotate an
// object may write one: 43 KB of gzipped `[{},{},…]` unpacks to 32 MiB and
// decodes into eleven million maps (1 GB and 15 s for one object). So what
// a compact record may hold is bounded by the object it sits on. kapply
// writes one only for a record past the annotation limit, and that record
// is the object's file, which the live object holds too (with what the
// server adds: defaults, status, managedFields): a record cannot be much
// larger, deeper or more numerous in values than the object it describes.
// Past its bound a compact record is corrupt (ErrCompactCorrupt), as one
// that does not unpack: apply warns and treats it as absent.
const (
	// recordFactor is how many times the live object's size, values and
	// depth its compact record may reach: room for fields another writer
	// removed since, or that the server prunes (unknown fields of a
	// custom resource).
	recordFactor = 4
	// The floors are what a compact record may reach on any object, however
	// small: a few MB to decode at most.
	minBoundBytes  = 1 << 20
	minBoundValues = 64 << 10
	minBoundDepth  = 64
	// maxUnpacked bounds what a compact record may unpack to on any object:
	// no object the API server stores comes near it.
	maxUnpacked = 32 << 20
	// unpackingAtOnce bounds the bytes that compact records being read at
	// once, by every worker of the process, may unpack to: sixteen
	// parallel objects each at its bound would otherwise add up.
	unpackingAtOnce = 64 << 20
)

// unpacking is what the compact records being read hold of unpackingAtOnce.
// It is the process's, not a run's: every run of the process (a fleet's
// clusters, parallel commands of a library user) shares the memory it
// bounds. Holders only unpack and decode, in bounded time, so a waiter
// never waits long.
var unpacking = semaphore.NewWeighted(unpackingAtOnce)

// recordBound is what a compact record may hold: unpacked bytes, JSON
// values (see jsonShape) and nesting depth.
type recordBound struct {
	bytes, values, depth int
}

// boundFor is the bound of the compact record on live: recordFactor times
// live's own size, values and depth (its JSON without the compact record),
// at least the floors, at most maxUnpacked bytes.
func boundFor(live *unstructured.Unstructured) recordBound {
	own := jsonOf(withoutCompactRecord(live.Object))
	shape := jsonShape(own)
	return recordBound{
		bytes:  min(max(minBoundBytes, recordFactor*len(own)), maxUnpacked),
		values: max(minBoundValues, recordFactor*shape.values),
		depth:  max(minBoundDepth, recordFactor*shape.depth),
	}
}

// withoutCompactRecord is obj without its compact record, sharing all but
// the maps that lead to it.
func withoutCompactRecord(obj map[string]any) map[string]any {
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	if _, ok := annotations[CompactAnnotation]; !ok {
		return obj
	}
	annotations = maps.Clone(annotations)
	delete(annotations, CompactAnnotation)
	metadata = maps.Clone(metadata)
	metadata["annotations"] = annotations
	obj = maps.Clone(obj)
	obj["metadata"] = metadata
	return obj
}

// jsonOf is obj's JSON; empty if it has none (the floors then bound its
// record).
func jsonOf(obj map[string]any) []byte {
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}

// shape is what decoding a JSON text allocates: values counts each
// object, array, member and element (an upper bound: the '{', '[', ':'
// and ',' outside strings, plus one), depth the deepest nesting.
type shape struct {
	values, depth int
}

// jsonShape measures data without decoding it, so a record past its bound
// is refused before a single value is allocated; JSON that is not valid is
// measured all the same and refused by the decoder after. Hand-written:
// no JSON library counts values without building them (a decoder's Token
// stream allocates one per token).
func jsonShape(data []byte) shape {
	s := shape{values: 1}
	inString, escaped, level := false, false, 0
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			s.values++
			level++
			s.depth = max(s.depth, level)
		case '}', ']':
			level--
		case ':', ',':
			s.values++
		}
	}
	return s
}

// withCompactJSON unpacks raw, the compact record of live, within live's
// bound and hands its JSON to use, holding meanwhile its share of what may
// be unpacked at once. Errors wrap ErrCompactCorrupt.
func withCompactJSON(raw string, live *unstructured.Unstructured, use func(data []byte) error) error {
	bound := boundFor(live)
	// Background: a holder never waits on anything but the CPU.
	if err := unpacking.Acquire(context.Background(), int64(bound.bytes)); err != nil {
		return fmt.Errorf("%w: %w", ErrCompactCorrupt, err)
	}
	defer unpacking.Release(int64(bound.bytes))
	data, err := unpack(raw, bound.bytes)
	if err != nil {
		return err
	}
	switch s := jsonShape(data); {
	case s.values > bound.values:
		return fmt.Errorf("%w: it holds more than %d JSON values, %d times those of the object it sits on", ErrCompactCorrupt, bound.values, recordFactor)
	case s.depth > bound.depth:
		return fmt.Errorf("%w: it nests deeper than %d levels, %d times the object it sits on", ErrCompactCorrupt, bound.depth, recordFactor)
	}
	return use(data)
}
