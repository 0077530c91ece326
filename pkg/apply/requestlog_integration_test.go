package apply_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// configMapRequests records "METHOD /name" for each request a client makes
// to the ConfigMaps of namespace ns.
type configMapRequests struct {
	ns   string
	mu   sync.Mutex
	seen []string
}

// wrap is cfg with its requests recorded.
func (c *configMapRequests) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	prefix := "/api/v1/namespaces/" + c.ns + "/configmaps"
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if strings.HasPrefix(req.URL.Path, prefix) {
				c.mu.Lock()
				c.seen = append(c.seen, req.Method+" "+strings.TrimPrefix(req.URL.Path, prefix))
				c.mu.Unlock()
			}
			return next.RoundTrip(req)
		})
	})
	return cfg
}

// sorted are the requests recorded, sorted.
func (c *configMapRequests) sorted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(slices.Values(c.seen))
}
