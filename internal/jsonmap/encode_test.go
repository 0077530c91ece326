package jsonmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// encodeDisagreement compares Append with encoding/json's Marshal on v.
func encodeDisagreement(v any) error {
	want, wantErr := json.Marshal(v)
	got, ok := Append([]byte("prefix"), v)
	switch {
	case wantErr != nil && ok:
		return fmt.Errorf("encoded %#v as %q; encoding/json refuses it: %v", v, got, wantErr)
	case wantErr != nil:
		return nil
	case !ok:
		return fmt.Errorf("refused %#v; encoding/json writes %q", v, want)
	case !bytes.Equal(got, append([]byte("prefix"), want...)):
		return fmt.Errorf("encoded %#v as\n %q\nencoding/json writes\n %q", v, got[len("prefix"):], want)
	}
	return nil
}

func TestAppendAgreesOnEdgeCases(t *testing.T) {
	values := []any{
		nil, true, false, "", int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
		0.0, math.Copysign(0, -1), 1.0, -1.5, 0.1, 1e20, 1e21, 123456789e13, 1e-6, 9.99e-7, 1e-7, 5e-324,
		math.MaxFloat64, -math.SmallestNonzeroFloat64, 1e100, 1.5e-10, 1e-100,
		"<a href=\"x\">&amp;</a>", "\\", "\"", "\b\f\n\r\t\x00\x01\x1f\x7f", "\u2028\u2029\u2027\u202a",
		"\xff", "a\xc3", "\xed\xa0\x80", "é€😀", "\xf4\x90\x80\x80", "\uFFFD",
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": int64(1), "a": []any{"x", nil, map[string]any{"<": "&", "": 2.5}}, "A": false, "\xff": "k"},
		map[string]any{"z": map[string]any{"y": map[string]any{"x": map[string]any{}}, "a": int64(1)}, "m": []any{map[string]any{"k": "v", "a": "b"}}},
	}
	for _, v := range values {
		if err := encodeDisagreement(v); err != nil {
			t.Error(err)
		}
	}
}

// TestAppendRefusesOtherValues: a type unstructured objects do not hold,
// or a float JSON has no form for, is left to encoding/json.
func TestAppendRefusesOtherValues(t *testing.T) {
	for _, v := range []any{
		int(1), int32(1), float32(1), []string{"a"}, map[string]string{"a": "b"}, json.Number("1"),
		math.NaN(), math.Inf(1), math.Inf(-1),
		map[string]any{"a": []any{int(1)}}, []any{map[string]any{"x": math.NaN()}},
	} {
		if out, ok := Append([]byte("x"), v); ok || string(out) != "x" {
			t.Errorf("Append(%#v) = %q, %v; want it refused with dst unchanged", v, out, ok)
		}
	}
}

// TestAppendAgreesOnGeneratedValues: the documents of the decoder's
// generator, as apimachinery decodes them, and random floats and strings
// of any bytes.
func TestAppendAgreesOnGeneratedValues(t *testing.T) {
	n := 100_000
	if testing.Short() || raceEnabled {
		n = 10_000
	}
	r := rand.New(rand.NewPCG(3, 4))
	g := gen{r: r}
	failures, encoded := 0, 0
	for i := 0; i < n && failures < 10; i++ {
		var v map[string]any
		if utiljson.Unmarshal(g.document(), &v) == nil {
			encoded++
			if err := encodeDisagreement(v); err != nil {
				t.Errorf("document %d: %.500v", i, err)
				failures++
			}
		}
		f := math.Float64frombits(r.Uint64())
		s := make([]byte, r.IntN(16))
		for j := range s {
			s[j] = byte(r.IntN(256))
		}
		for _, v := range []any{f, math.Round(f), float64(r.Int64()) / float64(int64(1)<<r.IntN(63)), string(s)} {
			if err := encodeDisagreement(v); err != nil {
				t.Error(err)
				failures++
			}
		}
	}
	if encoded < n/2 {
		t.Errorf("only %d of %d generated documents decoded: the generator has drifted", encoded, n)
	}
}

// FuzzAppend compares Append with encoding/json on what apimachinery
// decodes. go test runs the seeds only; fuzz with:
// go test -fuzz FuzzAppend ./internal/jsonmap
func FuzzAppend(f *testing.F) {
	for _, data := range edgeCases {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if utiljson.Unmarshal(data, &v) != nil {
			return
		}
		if err := encodeDisagreement(v); err != nil {
			t.Fatal(err)
		}
	})
}
