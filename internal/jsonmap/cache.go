package jsonmap

import (
	"encoding/binary"
	"math/bits"
	"sync"
)

// stringCache holds short strings decoded lately, boxed as the values
// decoding gives. Keys, and many values (kinds, API versions, statuses,
// "True"), recur from object to object: one taken from here costs a hash
// instead of two allocations (the string and the interface holding it),
// and all objects of a list share one copy. Direct-mapped: a string takes
// the slot of whatever string had its hash before.
type stringCache [cacheSlots]any

const (
	cacheBits  = 12
	cacheSlots = 1 << cacheBits
	// maxCached bounds the strings cached: longer ones (UIDs, messages,
	// embedded documents) seldom recur.
	maxCached = 32
)

// hash is the slot of b, len(b) <= maxCached, from its length and its
// first, middle and last eight bytes: cheaper than hashing every byte,
// and strings that differ only elsewhere merely share a slot.
func hash(b []byte) uint64 {
	const golden = 0x9E3779B97F4A7C15 // odd, with well-mixed bits
	h := uint64(len(b))
	if n := len(b); n >= 8 {
		first := binary.LittleEndian.Uint64(b)
		middle := binary.LittleEndian.Uint64(b[n/2-4:])
		last := binary.LittleEndian.Uint64(b[n-8:])
		h ^= first ^ middle*golden ^ bits.RotateLeft64(last, 29)
	} else {
		for _, c := range b {
			h = h<<8 | uint64(c)
		}
	}
	return (h * golden) >> (64 - cacheBits)
}

// get returns b as a string, boxed.
func (c *stringCache) get(b []byte) any {
	slot := &c[hash(b)]
	if s, ok := (*slot).(string); ok && s == string(b) {
		return *slot
	}
	v := any(string(b))
	*slot = v
	return v
}

// decoders keeps decoders, with their stacks and string cache, from one
// Object to the next: the cache then serves the many objects decoded in a
// row (a LIST, the records of its objects).
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// newDecoder returns a decoder of data; release it when done.
func newDecoder(data []byte) *decoder {
	d := decoders.Get().(*decoder)
	d.data, d.pos, d.depth = data, 0, 0
	return d
}

// release returns d to the pool, holding nothing of what it decoded but
// cached strings: the stacks are left empty by a decoding that succeeds
// and cleared here after one that fails.
func (d *decoder) release() {
	clear(d.kvs)
	clear(d.elems)
	d.kvs, d.elems, d.data = d.kvs[:0], d.elems[:0], nil
	if cap(d.buf) > 1<<16 {
		d.buf = nil // one huge escaped string is no reason to keep its room
	}
	decoders.Put(d)
}
