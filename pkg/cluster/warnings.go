package cluster

import (
	"context"
	"slices"
	"sync"
)

// serverWarnings hands the API server's warnings (an unknown field under
// --validate=warn, a deprecated API version) to the sink of the request's
// context (WithWarningSink): each object's requests carry one. Warnings of
// requests without one (discovery, prune) are dropped.
type serverWarnings struct{}

type warningSinkKey struct{}

// WarningSink gathers the warnings of one object's requests.
type WarningSink struct {
	mu     sync.Mutex
	gotten []string
}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (serverWarnings) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	sink, ok := ctx.Value(warningSinkKey{}).(*WarningSink)
	if !ok || text == "" {
		return
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if !slices.Contains(sink.gotten, text) {
		sink.gotten = append(sink.gotten, text)
	}
}

// WithWarningSink returns ctx with a new sink for one object's requests.
func WithWarningSink(ctx context.Context) (context.Context, *WarningSink) {
	sink := &WarningSink{}
	return sink.In(ctx), sink
}

// Texts are the gathered warnings as the server wrote them, each once.
func (s *WarningSink) Texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gotten)
}

// In returns ctx carrying the sink: its requests' warnings go to s.
func (s *WarningSink) In(ctx context.Context) context.Context {
	return context.WithValue(ctx, warningSinkKey{}, s)
}
