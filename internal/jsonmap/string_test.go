package jsonmap

import (
	"bytes"
	"testing"
)

// skipPlain must stop at the word of every byte that is not plain, at
// each place in the word, and pass over words that are all plain.
func TestSkipPlain(t *testing.T) {
	for c := range 256 {
		for at := range 8 {
			data := bytes.Repeat([]byte("a"), 24)
			data[8+at] = byte(c)
			got := skipPlain(data, 0)
			if want := 24; plain[c] && got != want {
				t.Errorf("byte 0x%02x at %d: stopped at %d in plain bytes", c, 8+at, got)
			}
			if !plain[c] && got != 8 {
				t.Errorf("byte 0x%02x at %d: stopped at %d, want 8", c, 8+at, got)
			}
		}
	}
}

// Decoders are pooled and their string cache shared by the objects
// decoded in a row: each decoding must give its own document's values.
func TestObjectConcurrently(t *testing.T) {
	docs := []string{`{"a":"x","b":["x","y"]}`, `{"a":"y","b":["y","x"],"c":{"a":"z"}}`, `{"a":1,"b":"\u0078"}`}
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range 500 {
				if err := disagreement([]byte(docs[(g+i)%len(docs)])); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
