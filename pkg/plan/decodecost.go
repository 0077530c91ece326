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

// maxDecodeFactor bounds the estimated memory of a plan document's
// decoding, per byte of the document. A plan kapply writes (indented,
// strings for the most part) estimates at a few times its size; a body of
// nothing but tiny values ("[],[],..." or "0,0,...") at 30 to 60 times,
// which made a 9 MB file hold 330 MB before its checksum was compared.
const maxDecodeFactor = 16

// decodeCostFloor lets a small document through whatever its shape: its
// decoding costs little in absolute terms.
const decodeCostFloor = 16 << 20

// checkDecodeCost refuses data, a syntactically valid JSON document, whose
// decoding would cost more than maxDecodeFactor times its size (above
// decodeCostFloor), before it is decoded: its checksum, computed from the
// decoded content, cannot be compared first.
func checkDecodeCost(data []byte) error {
	cost := decodeCost(data)
	if limit := max(int64(len(data))*maxDecodeFactor, decodeCostFloor); cost > limit {
		return fmt.Errorf("%w: the document's %d bytes would take about %d MB to decode (the limit is %d times its size): refused unread", ErrInvalid, len(data), cost>>20, maxDecodeFactor)
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
