package plan

import (
	"bytes"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
)

var (
	// Every digest form kapply writes or wrote: keyed value digests,
	// older unkeyed ones, and a plan item's record digests.
	keyedValueDigest  = regexp.MustCompile(`kapply:hmac:[0-9a-f]{8}:[A-Za-z0-9_-]{16}:[0-9a-f]{24}`)
	olderValueDigest  = regexp.MustCompile(`kapply:sha256:[A-Za-z0-9_-]{16}:[0-9a-f]{32}`)
	recordDigestField = regexp.MustCompile(`"lastApplied":"([^"]*)"`)
)

// TestNoDigestToTestAGuessWithoutTheKey decodes a plan file and a Secret's
// record as someone without the namespace's digest key would: a 6-digit
// PIN, its record kubectl's (plain) on the live object, changed by the
// plan. Every digest of a value either file holds is keyed: under no key
// and under any other key, no guess (not even the right one) matches it,
// and the record digest of the Secret item is keyed too. Under the key,
// the same digests match the values (they are what verification reads).
func TestNoDigestToTestAGuessWithoutTheKey(t *testing.T) {
	const oldPIN, newPIN = "159372", "482913"
	secret := func(pin string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": "pin", "namespace": "prod"}, "stringData": map[string]any{"pin": pin}}}
	}
	kubectlRecord, err := lastapplied.Encode(secret(oldPIN))
	if err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "pin", "namespace": "prod", "uid": "u-pin", "resourceVersion": "3",
			"annotations": map[string]any{lastapplied.Annotation: string(kubectlRecord)}},
		"data": map[string]any{"pin": b64(oldPIN)}}}
	file, _, err := lastapplied.AttachWith(secret(newPIN), lastapplied.Recording{Live: live, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	record := []byte(file.GetAnnotations()[lastapplied.Annotation])
	mp, err := merge.ThreeWay(map[string]any{"stringData": map[string]any{"pin": oldPIN}}, file.Object, live.Object, nil)
	if err != nil {
		t.Fatal(err)
	}
	created, _, err := lastapplied.AttachWith(secret(newPIN), lastapplied.Recording{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	created.SetName("pin-new")
	p := &Plan{Cluster: Cluster{Server: "s"}, Items: []Item{
		FromMerge(file, live, Source{File: "pin.yaml"}, mp, nil).KeyedBy(testKey, live),
		NewCreate(created, Source{File: "pin.yaml"}).KeyedBy(testKey, nil),
	}}
	var planFile bytes.Buffer
	if err := Encode(&planFile, p); err != nil {
		t.Fatal(err)
	}

	otherKey, err := lastapplied.NewDigestKey([]byte("a key the guesser made up itself"))
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{"the plan file": planFile.Bytes(), "the record": record} {
		for _, pin := range []string{oldPIN, newPIN, b64(oldPIN), b64(newPIN)} {
			if bytes.Contains(doc, []byte(pin)) {
				t.Errorf("%s holds the value %s", name, pin)
			}
		}
		if older := olderValueDigest.FindAll(doc, -1); len(older) > 0 {
			t.Errorf("%s holds unkeyed digests anyone can test guesses against: %s", name, older)
		}
		digests := keyedValueDigest.FindAll(doc, -1)
		if len(digests) == 0 {
			t.Errorf("%s holds no digest of a value:\n%s", name, doc)
		}
		matched := 0
		for _, d := range digests {
			for _, pin := range []string{oldPIN, newPIN} {
				if lastapplied.MatchesRedacted(lastapplied.DigestKey{}, string(d), "stringData", "pin", pin) ||
					lastapplied.MatchesRedacted(otherKey, string(d), "stringData", "pin", pin) {
					t.Errorf("%s: %s can be tested without the key", name, d)
				}
				if lastapplied.MatchesRedacted(testKey, string(d), "stringData", "pin", pin) {
					matched++
				}
			}
		}
		if matched == 0 {
			t.Errorf("%s: no digest matches its value even under the key", name)
		}
	}
	for _, m := range recordDigestField.FindAllSubmatch(planFile.Bytes(), -1) {
		if !bytes.HasPrefix(m[1], []byte("hmac:"+testKey.ID()+":")) {
			t.Errorf("the Secret item's record digest %s is not keyed", m[1])
		}
	}
	decoded, err := Decode(bytes.NewReader(planFile.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// Without the key, the decoded plan's Secret items are refused, not
	// verified against nothing.
	moved := live.DeepCopy()
	moved.SetResourceVersion("4")
	if _, err := decoded.Items[0].Verify(moved); err == nil || !bytes.Contains([]byte(err.Error()), []byte("no digest key")) {
		t.Errorf("a decoded Secret item without the key: %v", err)
	}
	decoded.Items[0].DigestKey = testKey
	if rv, err := decoded.Items[0].Verify(moved); err != nil || rv != "4" {
		t.Errorf("the decoded Secret item under the key: %q, %v", rv, err)
	}
	decoded.Items[0].DigestKey = otherKey
	if _, err := decoded.Items[0].Verify(moved); err == nil || !bytes.Contains([]byte(err.Error()), []byte("run kapply plan again")) {
		t.Errorf("the decoded Secret item under another key: %v", err)
	}
}
