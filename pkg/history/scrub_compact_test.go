package history

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// TestScrubDropsTheCompactRecord: kapply's compact record holds a
// Secret's values packed when --secret-record=plain wrote it (a file may
// carry one, copied from a live object); a revision keeps neither record.
func TestScrubDropsTheCompactRecord(t *testing.T) {
	var packed bytes.Buffer
	zw := gzip.NewWriter(&packed)
	if _, err := zw.Write([]byte(`{"apiVersion":"v1","kind":"Secret","stringData":{"p":"hunter22"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	compact := base64.StdEncoding.EncodeToString(packed.Bytes())
	s := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{
		"kapply.dev/last-applied-compact":"`+compact+`","keep":"me"}},"stringData":{"p":"hunter22"}}`)
	text, err := json.Marshal(Scrub(s.Object))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), compact) || strings.Contains(string(text), "last-applied-compact") {
		t.Errorf("scrubbed Secret keeps its compact record: %s", text)
	}
	if !strings.Contains(string(text), `"keep":"me"`) {
		t.Errorf("other annotations dropped: %s", text)
	}
}
