package apply

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// serverWarnings hands the API server's warnings (an unknown field under
// --validate=warn, a deprecated API version) to the object whose request
// drew them: each object's requests carry a sink in their context. Warnings
// of requests without one (discovery, prune) are dropped, as before.
type serverWarnings struct{}

type warningSinkKey struct{}

// warningSink gathers the warnings of one object's requests.
type warningSink struct {
	mu     sync.Mutex
	gotten []string
}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (serverWarnings) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	sink, ok := ctx.Value(warningSinkKey{}).(*warningSink)
	if !ok || text == "" {
		return
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if !slices.Contains(sink.gotten, text) {
		sink.gotten = append(sink.gotten, text)
	}
}

// withWarningSink returns ctx with a new sink for one object's requests.
func withWarningSink(ctx context.Context) (context.Context, *warningSink) {
	sink := &warningSink{}
	return context.WithValue(ctx, warningSinkKey{}, sink), sink
}

// warnings are the gathered texts, each naming the object.
func (s *warningSink) warnings(o *object) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.gotten))
	for _, text := range s.gotten {
		out = append(out, fmt.Sprintf("%s: %s", o.Ref(), text))
	}
	return out
}

// texts are the gathered texts as the server wrote them.
func (s *warningSink) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gotten)
}
