package secretmask

import (
	"strconv"
	"sync"
	"testing"
)

// TestMaskerMasksAsText: a Masker given Secrets one at a time, masking a
// text between additions (so its forms are computed in parts), masks as
// Text does with all the Secrets at once; a Secret added twice changes
// nothing; the zero and nil Maskers mask nothing.
func TestMaskerMasksAsText(t *testing.T) {
	all := []map[string]any{
		secret("creds", "m1", "secret", "tok-0123456789abcdef"),
		secret("db", "m1", "pa\"ss<>&é", "line-one\nline-two"),
		secret("creds", "team-a-2", "team-a-2", "x9-z"),
		{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "forbidden"}},
	}
	texts := []string{
		prefix + policyDeny + `secret value "c2VjcmV0" is not allowed for a secret; key: c2VjcmV0`,
		webhook + `got tok-0123456789abcdef and "pa\"ss<>&é", raw line-one\nline-two, x9-z`,
		`secret/creds -n team-a-2: namespaces "team-a-2" not found; the value is "team-a-2", forbidden`,
	}
	var m Masker
	for i, obj := range all {
		m.Add(obj)
		for _, text := range texts {
			if got, want := m.Text(text), Text(text, all[:i+1]...); got != want {
				t.Errorf("after %d Secrets:\n got %s\nwant %s", i+1, got, want)
			}
		}
	}
	m.Add(all...)
	for _, text := range texts {
		if got, want := m.Text(text), Text(text, all...); got != want {
			t.Errorf("added twice:\n got %s\nwant %s", got, want)
		}
	}
	var zero Masker
	var none *Masker
	if zero.Text(texts[0]) != texts[0] || none.Text(texts[0]) != texts[0] {
		t.Error("an empty Masker masked something")
	}
}

// TestMaskerIsSafeForConcurrentUse adds and masks from many goroutines at
// once (go test -race), and each value added before a text is masked in it.
func TestMaskerIsSafeForConcurrentUse(t *testing.T) {
	var m Masker
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			value := "value-" + strconv.Itoa(i) + "-q7x9k2"
			m.Add(secret("s"+strconv.Itoa(i), "m1", value))
			if got := m.Text(`denied: "` + value + `"`); got != `denied: "***"` {
				t.Errorf("value %s: %s", value, got)
			}
		})
	}
	wg.Wait()
}
