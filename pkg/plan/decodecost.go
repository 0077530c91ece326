package plan

import "fmt"

// What decoding a JSON value into Go's map[string]any and []any costs in
// memory, roughly, beyond the bytes of its strings: a map (its header and
// first slots), a slice (its header, boxed), and each member or element
// (its slot, with a map's or a slice's room to grow).
const (
	decodedContainerBytes = 64
	decodedValueBytes     = 64
	decodedStringBytes    = 16
)

// maxDecodeFactor bounds the estimated memory of decoding one value of a
// plan document (an item, a header member), per byte of it, checked
// before it is decoded. An item kapply writes (strings for the most part)
// estimates at a few times its size; a body of nothing but tiny values
// ("[],[],..." or "0,0,...") at 30 to 60 times, which made a 9 MB file
// hold 330 MB before its checksum was compared.
const maxDecodeFactor = 16

// decodeCostFloor lets a small document through whatever its shape: its
// decoding costs little in absolute terms.
const decodeCostFloor = 16 << 20

// decodeBudget is the estimated memory of decoding a document's values
// read so far, against what their size allows: the bound holds for the
// whole document (the items decoded are held until its checksum, after
// the last, is compared), not only for each item.
type decodeBudget struct {
	size, cost int64
}

// spend refuses data, a syntactically valid JSON value (one item or member
// of a document), when the values read so far with it would cost more to
// decode than maxDecodeFactor times their size (above decodeCostFloor),
// before it is decoded.
func (b *decodeBudget) spend(data []byte) error {
	b.size += int64(len(data))
	b.cost += decodeCost(data)
	if limit := max(b.size*maxDecodeFactor, decodeCostFloor); b.cost > limit {
		return fmt.Errorf("%w: the document's %d bytes so far would take about %d MB to decode (the limit is %d times its size): refused unread", ErrInvalid, b.size, b.cost>>20, maxDecodeFactor)
	}
	return nil
}

// decodeCost estimates, in one pass over data (valid JSON), the memory
// its decoding into map[string]any and []any takes.
func decodeCost(data []byte) int64 {
	var cost int64
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			cost += decodedContainerBytes + decodedValueBytes
		case ',':
			cost += decodedValueBytes
		case '"':
			start := i
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			cost += decodedStringBytes + int64(i-start)
		}
	}
	return cost
}
