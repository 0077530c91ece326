package plan

import (
	"errors"
	"testing"
)

// countingZeros is an endless file of NUL bytes (a binary file, /dev/zero)
// that counts what was read of it.
type countingZeros struct{ read int64 }

func (z *countingZeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

// TestDecodeRefusesNonJSONWithoutReadingIt: a file given to --plan by
// mistake (a binary, an archive) is refused from its first bytes, not
// read up to MaxDocumentBytes first (which held over 1 GB of memory).
func TestDecodeRefusesNonJSONWithoutReadingIt(t *testing.T) {
	z := &countingZeros{}
	_, err := Decode(z)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v, want ErrInvalid", err)
	}
	if z.read > 1<<20 {
		t.Errorf("read %d bytes of a file that is not JSON before refusing it", z.read)
	}
}
