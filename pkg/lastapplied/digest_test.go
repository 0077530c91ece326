package lastapplied

import (
	"encoding/base64"
	"testing"
)

// TestSaltRedactMatchesTheRecordsRule: a digest written by another package
// is checked as a record's is, a value under data (base64) and under
// stringData alike, and two salts give two digests.
func TestSaltRedactMatchesTheRecordsRule(t *testing.T) {
	s, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	d := s.Redact("stringData", "token", "hunter2-Xq9")
	if !IsRedacted(d) || !MatchesRedacted(d, "data", "token", base64.StdEncoding.EncodeToString([]byte("hunter2-Xq9"))) || !MatchesRedacted(d, "stringData", "token", "hunter2-Xq9") {
		t.Errorf("digest %s does not match its value", d)
	}
	if MatchesRedacted(d, "stringData", "token", "hunter3-Xq9") || MatchesRedacted(d, "stringData", "other", "hunter2-Xq9") {
		t.Error("digest matches another value or key")
	}
	other, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	if other.Redact("stringData", "token", "hunter2-Xq9") == d {
		t.Error("two salts gave one digest")
	}
}
