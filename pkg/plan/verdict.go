package plan

// Verdict is what one admission policy of the cluster says about an item,
// found by `kapply --check` (pkg/check) on the object the item would send.
// An item no policy objects to has none.
type Verdict struct {
	Outcome Outcome `json:"outcome"`
	// Policy and Binding name the ValidatingAdmissionPolicy and its
	// binding (or, for an unknown verdict, what made it unknown).
	Policy  string `json:"policy,omitempty"`
	Binding string `json:"binding,omitempty"`
	Message string `json:"message,omitempty"`
}

// Outcome is a verdict's word: what the server would do with the write.
type Outcome string

const (
	// Denied: a binding with validationActions Deny fails; the server
	// would refuse the write.
	Denied Outcome = "denied"
	// Warned: a binding with Warn fails; the server would warn.
	Warned Outcome = "warned"
	// Audited: a binding with Audit fails; only the audit log would say.
	Audited Outcome = "audited"
	// Unknown: the check cannot tell what the server would do (a mutating
	// policy or webhook changes the object first, an expression asks the
	// authorizer); Message says why.
	Unknown Outcome = "unknown"
)

// DeniedItems are the items a policy would refuse.
func (p *Plan) DeniedItems() []Item {
	var denied []Item
	for _, it := range p.Items {
		for _, v := range it.Verdicts {
			if v.Outcome == Denied {
				denied = append(denied, it)
				break
			}
		}
	}
	return denied
}
