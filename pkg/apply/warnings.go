package apply

import (
	"context"
	"fmt"

	"github.com/kapply/kapply/pkg/cluster"
)

// warningSink gathers the server's warnings to one object's requests
// (cluster.WarningSink, which NewClients' transport fills).
type warningSink struct{ *cluster.WarningSink }

// withWarningSink returns ctx with a new sink for one object's requests.
func withWarningSink(ctx context.Context) (context.Context, warningSink) {
	ctx, sink := cluster.WithWarningSink(ctx)
	return ctx, warningSink{sink}
}

// warnings are the gathered texts, each naming the object.
func (s warningSink) warnings(o *object) []string {
	texts := s.Texts()
	out := make([]string, 0, len(texts))
	for _, text := range texts {
		out = append(out, fmt.Sprintf("%s: %s", o.Ref(), text))
	}
	return out
}

// texts are the gathered texts as the server wrote them.
func (s warningSink) texts() []string { return s.Texts() }
