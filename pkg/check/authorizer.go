package check

import (
	"context"
	"sync/atomic"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// unknownAuthorizer stands in for the cluster's authorizer, which a check
// cannot consult: it answers no opinion and remembers that it was asked,
// so the verdict of an expression that used it is Unknown, not a guess.
type unknownAuthorizer struct{ asked atomic.Bool }

func (a *unknownAuthorizer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked.Store(true)
	return authorizer.DecisionNoOpinion, "kapply --check cannot ask the cluster's authorizer", nil
}
