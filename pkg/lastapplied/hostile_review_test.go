package lastapplied

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// gzipMembers is one gzip member per part, concatenated: gzip readers
// read on across members, so a bomb may be split to slip past a check
// of one member. Equal parts are compressed once (cheap bombs under -race).
func gzipMembers(t *testing.T, parts ...[]byte) []byte {
	t.Helper()
	compressed := map[string][]byte{}
	var out bytes.Buffer
	for _, part := range parts {
		member, done := compressed[string(part)]
		if !done {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(part); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			member = buf.Bytes()
			compressed[string(part)] = member
		}
		out.Write(member)
	}
	return out.Bytes()
}

// bombOf is head, n MiB of chunk repeated, and tail, gzipped a MiB a
// member.
func bombOf(t *testing.T, head, chunk, tail string, n int) []byte {
	t.Helper()
	mib := []byte(strings.Repeat(chunk, (1<<20)/len(chunk)))
	parts := [][]byte{[]byte(head)}
	for range n {
		parts = append(parts, mib)
	}
	return gzipMembers(t, append(parts, []byte(tail))...)
}

func base64Of(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// hostileCompactRecords are compact records of shapes other than
// `[{},{},…]`, each refused on a small object, with what the refusal says.
// Bombs unpack to 8 MiB, eight times the bound of a small object.
func hostileCompactRecords(t *testing.T) map[string]struct{ raw, want string } {
	keys := make([]string, 0, 70000)
	for i := range 70000 {
		keys = append(keys, fmt.Sprintf(`"a%d":0`, i))
	}
	valid := gzipMembers(t, []byte(`{"spec":{"a":1}}`))
	random := make([]byte, 190<<10)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	return map[string]struct{ raw, want string }{
		"deep nesting, one member":        {base64Of(gzipMembers(t, []byte(`{"a":`+strings.Repeat("[", 1<<20)+strings.Repeat("]", 1<<20)+`}`))), "unpacks to more than 1048576 bytes"},
		"deep nesting, 4M levels":         {base64Of(append(bombOf(t, `{"a":`, "[", "", 4), bombOf(t, "", "]", "}", 4)...)), "unpacks to more than 1048576 bytes"},
		"deep nesting within the bytes":   {base64Of(gzipMembers(t, []byte(`{"a":`+strings.Repeat("[", 4000)+strings.Repeat("]", 4000)+`}`))), "deeper than 64 levels"},
		"an 8 MiB string":                 {base64Of(bombOf(t, `{"a":"`, "a", `"}`, 8)), "unpacks to more than 1048576 bytes"},
		"70,000 keys":                     {base64Of(gzipMembers(t, []byte("{"+strings.Join(keys, ",")+"}"))), "more than 65536 JSON values"},
		"one key, repeated":               {base64Of(bombOf(t, "{", `"a":0,`, `"a":0}`, 8)), "unpacks to more than 1048576 bytes"},
		"numbers":                         {base64Of(bombOf(t, `{"a":[`, "1e308,", "1]}", 8)), "unpacks to more than 1048576 bytes"},
		"10 members of 1 MiB of [":        {base64Of(bombOf(t, "", "[", "", 10)), "unpacks to more than 1048576 bytes"},
		"[{},{},…] across members":        {base64Of(bombOf(t, `{"a":[`, "{},", "{}]}", 8)), "unpacks to more than 1048576 bytes"},
		"trailing garbage":                {base64Of(append(valid[:len(valid):len(valid)], "garbage!"...)), "unpacking it"},
		"trailing zeros":                  {base64Of(append(valid[:len(valid):len(valid)], make([]byte, 1000)...)), "unpacking it"},
		"truncated":                       {base64Of(valid[:len(valid)-6]), "unpacking it"},
		"a second member truncated":       {base64Of(append(valid[:len(valid):len(valid)], valid[:12]...)), "unpacking it"},
		"190 KiB of random bytes":         {base64Of(random), "unpacking it"},
		"URL-safe base64":                 {base64.URLEncoding.EncodeToString(append(valid, 0xff, 0xfe)), "neither JSON nor base64"},
		"unpacked JSON, 100,000 levels":   {`{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, "more than 65536 JSON values"},
		"unpacked JSON, a trailing comma": {`{"a":1,}`, "invalid character"},
		"empty":                           {"", "unpacking it"},
		"an array":                        {base64Of(gzipMembers(t, []byte(`[1,2]`))), "cannot unmarshal array"},
		"a BOM":                           {base64Of(gzipMembers(t, []byte("\ufeff{\"a\":1}"))), "invalid character"},
		"a NUL after the object":          {base64Of(gzipMembers(t, []byte("{\"a\":1}\x00"))), "invalid character"},
		"a number out of range":           {base64Of(gzipMembers(t, []byte(`{"a":1e999}`))), "cannot unmarshal number 1e999"},
	}
}

// TestHostileCompactRecordsAreRefusedCheaply: every shape is refused as
// corrupt (ErrCompactCorrupt, saying why) on a small object, within a few
// MB of allocation and well under a second each — never decoded whole.
func TestHostileCompactRecordsAreRefusedCheaply(t *testing.T) {
	for name, c := range hostileCompactRecords(t) {
		live := withCompact([]byte(c.raw))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		record, err := Read(live)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if record != nil || !errors.Is(err, ErrCompactCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: record %v, err %v; want ErrCompactCorrupt saying %q", name, record != nil, err, c.want)
		}
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 12<<20 {
			t.Errorf("%s: reading it allocated %d MB", name, allocated>>20)
		}
		if took > 2*time.Second {
			t.Errorf("%s: reading it took %v", name, took)
		}
		// Every reader of records refuses it the same way; View shows
		// the record's JSON as it is, refusing only what cannot be
		// unpacked within the bound.
		decodable := strings.Contains(c.want, "invalid character") || strings.Contains(c.want, "cannot unmarshal")
		if _, err := View(live, "json", testKey); !decodable && !errors.Is(err, ErrCompactCorrupt) {
			t.Errorf("%s: View: %v", name, err)
		}
		if _, err := EditRecord(live, func(map[string]any) error { return nil }); !errors.Is(err, ErrCompactCorrupt) {
			t.Errorf("%s: EditRecord: %v", name, err)
		}
	}
}

// TestCompactRecordsWithinTheFloorsAreRead: what a small object's record
// may hold — 64 levels, a 1 MiB string, 65,536 values — is read.
func TestCompactRecordsWithinTheFloorsAreRead(t *testing.T) {
	for name, record := range map[string]string{
		"64 levels":      `{"a":` + strings.Repeat(`{"b":`, 62) + "1" + strings.Repeat("}", 62) + `}`,
		"a 1 MiB string": `{"a":"` + strings.Repeat("a", 1<<20-16) + `"}`,
		"65,530 values":  `{"a":[` + strings.Repeat("{},", 65530/2-2) + `{}]}`,
	} {
		packed, err := pack([]byte(record))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Read(withCompact(packed)); err != nil || got == nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMutatedCompactRecordsNeverPanic: 2,000 random byte edits of a packed
// record (flips, cuts, insertions, in the gzip stream and in the base64
// text) each read as a record or refused as corrupt, never a panic nor
// another error.
func TestMutatedCompactRecordsNeverPanic(t *testing.T) {
	record, err := Encode(bigSchema(60))
	if err != nil {
		t.Fatal(err)
	}
	packed, err := pack(record)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(packed)
	zipped, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	rng := mathrand.New(mathrand.NewPCG(1, 2))
	for i := range 2000 {
		mutated := string(mutate(rng, []byte(raw)))
		if i%2 == 0 {
			mutated = base64Of(mutate(rng, zipped))
		}
		if _, err := Read(withCompact([]byte(mutated))); err != nil && !errors.Is(err, ErrCompactCorrupt) {
			t.Fatalf("mutation %d: %v", i, err)
		}
	}
}

// mutate is data with a few random bytes flipped, cut or inserted.
func mutate(rng *mathrand.Rand, data []byte) []byte {
	out := bytes.Clone(data)
	for range 1 + rng.IntN(4) {
		i := rng.IntN(len(out))
		switch rng.IntN(3) {
		case 0:
			out[i] ^= byte(1 + rng.IntN(255))
		case 1:
			out = append(out[:i], out[min(len(out), i+1+rng.IntN(16)):]...)
		default:
			out = append(out[:i], append([]byte{byte(rng.IntN(256))}, out[i:]...)...)
		}
		if len(out) == 0 {
			out = []byte{0}
		}
	}
	return out
}

// secretWithRecord is a Secret carrying record in the annotation key.
func secretWithRecord(key, record string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "annotations": map[string]any{key: record}},
		"data":     map[string]any{"password": "aHVudGVyMg=="},
	}}
}

// TestMalformedSecretRecordsAreNotQuoted: a Secret's record that is not
// valid JSON is refused without quoting any of it — the decoder quotes a
// number out of range whole, and the character where it stopped, which
// may be a value's — kubectl's record (ErrMalformed) or a compact one
// (ErrCompactCorrupt) alike, and says where it stopped. Another object's
// record is quoted as the decoder does.
func TestMalformedSecretRecordsAreNotQuoted(t *testing.T) {
	const pin = "31415926535897932384626433"
	head := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":`
	for name, record := range map[string]string{
		"a number out of range": head + `{"pin":` + pin + `e999}}`,
		"a control character":   head + `{"pin":"` + pin + "\x01" + `"}}`,
		"a bad escape":          head + `{"pin":"` + pin + `\q"}}`,
		"junk after it":         head + `{"pin":"` + pin + `"}}` + pin,
	} {
		packed, err := pack([]byte(record))
		if err != nil {
			t.Fatal(err)
		}
		for key, raw := range map[string]string{Annotation: record, CompactAnnotation: string(packed)} {
			_, err := Read(secretWithRecord(key, raw))
			if err == nil || strings.Contains(err.Error(), pin[:8]) || !strings.Contains(err.Error(), "invalid at offset") {
				t.Errorf("%s in %s: %v; want an error quoting nothing of the record, with its offset", name, key, err)
			}
		}
	}
	cm := withCompact(nil)
	cm.SetAnnotations(map[string]string{Annotation: `{"n":` + pin + `e999}`})
	if _, err := Read(cm); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), pin) {
		t.Errorf("a ConfigMap's record: %v; want the decoder's message", err)
	}
}

// TestSetOnAnUnreadableCompactRecord: last-applied set on an object whose
// compact record cannot be read says so, and does not tell to create a
// record the object has.
func TestSetOnAnUnreadableCompactRecord(t *testing.T) {
	live := withCompact([]byte("not base64!"))
	_, err := Set(live, []byte(`{}`), false)
	if !errors.Is(err, ErrCompactCorrupt) || strings.Contains(err.Error(), "--create-annotation") {
		t.Errorf("err %v; want ErrCompactCorrupt without the --create-annotation hint", err)
	}
	if _, err := Set(widget(nil), []byte(`{}`), false); !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "--create-annotation") {
		t.Errorf("no record: %v; want kubectl's hint", err)
	}
}
