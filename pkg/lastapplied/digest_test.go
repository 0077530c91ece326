package lastapplied

import (
	"encoding/base64"
	"errors"
	"strings"
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
	d, err := s.Redact(testKey, "stringData", "token", "hunter2-Xq9")
	if err != nil {
		t.Fatal(err)
	}
	if !IsRedacted(d) || !MatchesRedacted(testKey, d, "data", "token", base64.StdEncoding.EncodeToString([]byte("hunter2-Xq9"))) || !MatchesRedacted(testKey, d, "stringData", "token", "hunter2-Xq9") {
		t.Errorf("digest %s does not match its value", d)
	}
	if MatchesRedacted(testKey, d, "stringData", "token", "hunter3-Xq9") || MatchesRedacted(testKey, d, "stringData", "other", "hunter2-Xq9") {
		t.Error("digest matches another value or key")
	}
	other, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := other.Redact(testKey, "stringData", "token", "hunter2-Xq9"); o == d {
		t.Error("two salts gave one digest")
	}
}

// TestDigestsNeedTheKey: a digest is checked under the key it was made
// under and no other (a reader without the key has nothing to test a
// guess against); nothing is redacted without a key; a digest names its
// key's ID, not the key.
func TestDigestsNeedTheKey(t *testing.T) {
	s, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Redact(testKey, "stringData", "pin", "482913")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := NewDigestKey([]byte("another key of thirty-two bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	if MatchesRedacted(otherKey, d, "stringData", "pin", "482913") || MatchesRedacted(DigestKey{}, d, "stringData", "pin", "482913") {
		t.Errorf("digest %s matches its value under another key or none", d)
	}
	if id, ok := DigestKeyOf(d); !ok || id != testKey.ID() || !strings.Contains(d, ":"+id+":") {
		t.Errorf("digest %s names key %q, want %q", d, id, testKey.ID())
	}
	if _, err := s.Redact(DigestKey{}, "stringData", "pin", "482913"); !errors.Is(err, ErrNoDigestKey) {
		t.Errorf("redacting without a key: %v, want ErrNoDigestKey", err)
	}
	if _, _, err := AttachWith(secretFile(), Recording{}); !errors.Is(err, ErrNoDigestKey) {
		t.Errorf("recording a Secret without a key: %v, want ErrNoDigestKey", err)
	}
	if _, err := NewDigestKey([]byte("short")); err == nil {
		t.Error("a 5-byte key was taken")
	}
}

// TestOlderRecordsStillMatch: a record written by an older kapply
// ("kapply:sha256:SALT:SUM", unkeyed) is still read: its digests match
// their values without a key, its salt is kept, and the next record of
// the same file replaces them by keyed digests.
func TestOlderRecordsStillMatch(t *testing.T) {
	var s salt
	copy(s[:], "older-salt!!")
	old := legacyDigest(s, "password", []byte(passwordValue))
	if !IsRedacted(old) || !MatchesRedacted(DigestKey{}, old, "stringData", "password", passwordValue) ||
		MatchesRedacted(testKey, old, "stringData", "password", "other") {
		t.Fatalf("older digest %s is not read as it was", old)
	}
	if id, ok := DigestKeyOf(old); !ok || id != "" {
		t.Errorf("older digest names key %q", id)
	}
	live := secretFile()
	live.SetAnnotations(map[string]string{Annotation: `{"apiVersion":"v1","kind":"Secret","stringData":{"password":"` + old + `"}}`})
	out, _, err := AttachWith(secretFile(), Recording{Live: live, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	record := recordMap(t, out)
	for _, field := range []string{"data", "stringData"} {
		for key, v := range record[field].(map[string]any) {
			if v == nil {
				continue
			}
			r, ok := parseRedacted(v)
			if !ok || r.keyID != testKey.ID() || r.salt != s {
				t.Errorf("%s.%s: %v is not a keyed digest under the older record's salt", field, key, v)
			}
		}
	}
}

// TestViewWithoutTheKeyHidesPlainValues: a plain record viewed without
// the namespace's key shows Hidden for each value (no digest, no value);
// Hidden counts as redacted and matches no value.
func TestViewWithoutTheKeyHidesPlainValues(t *testing.T) {
	live := secretFile()
	live.SetAnnotations(map[string]string{Annotation: kubectlRecord(t)})
	out, err := View(live, "json", DigestKey{})
	if err != nil {
		t.Fatal(err)
	}
	assertNoValues(t, "the view without a key", string(out))
	if strings.Contains(string(out), redactedPrefix) || strings.Count(string(out), Hidden) != 3 {
		t.Errorf("view without a key:\n%s", out)
	}
	if !IsRedacted(Hidden) || MatchesRedacted(testKey, Hidden, "stringData", "password", passwordValue) {
		t.Error("Hidden is not a redacted value that matches nothing")
	}
}
