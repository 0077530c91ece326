package lastapplied

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Fixtures for the tests of package lastapplied_test, which read records
// through pkg/ownership (an import this package cannot make).
var (
	Applied       = applied
	Gadget        = gadget
	GadgetKind    = gadgetKind
	LongText      = longText
	SecretFile    = secretFile
	TokenValue    = tokenValue
	PasswordValue = passwordValue
)

var B64 = b64

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// testKey is the digest key of the tests' Secrets.
var testKey = func() DigestKey {
	k, err := NewDigestKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

// attachKeyed is Attach with the tests' digest key.
func attachKeyed(obj *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	return AttachWith(obj, Recording{Key: testKey})
}

var (
	TestKey     = testKey
	AttachKeyed = attachKeyed
)
