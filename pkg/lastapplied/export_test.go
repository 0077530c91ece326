package lastapplied

import "encoding/base64"

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
