// Package secretmask knows which fields of a v1 Secret hold its values and
// masks those values in text that may quote them: an error or warning of
// the API server, of an admission policy or of a webhook.
package secretmask

// Mask is what a masked value is shown as.
const Mask = "***"

// IsSecret reports whether obj is a core v1 Secret.
func IsSecret(obj map[string]any) bool {
	return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

// Fields returns the fields of a Secret that hold its values, data and
// stringData (a new slice each time: callers may not change the set).
func Fields() []string { return []string{"data", "stringData"} }
