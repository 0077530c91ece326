package schema

import (
	"net/url"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SharedDocuments lets the Resolvers of one run over several clusters
// (one per context) fetch and parse each OpenAPI v3 document once: 30
// contexts on three servers otherwise parse the same documents 30 times,
// 40% of the CPU time of a fleet re-apply. A document is known by the
// server-relative URL and hash of the server's listing
// (/openapi/v3/apis/apps/v1?hash=…), which name its content: a document
// parsed from one server serves every context whose server lists the same
// URL and hash. A document listed without a hash is not shared.
//
// Contexts wait for another's fetch only on the same server, which they
// would wait for anyway: a hung or refusing server holds up no other. A
// fetch that failed is never kept, and the contexts that waited for it
// fetch for themselves: one context's failure (RBAC, a timeout) is not
// another's. Make one per run of a command, like a Resolver: it keeps
// every document it parsed until it is dropped.
type SharedDocuments struct {
	// fetches are the documents by server and URL, fetched once.
	fetches memo[serverURL, *Document]

	mu sync.RWMutex
	// parsed are the documents fetched from any server, by URL.
	parsed map[string]*Document
}

type serverURL struct{ server, url string }

// NewSharedDocuments returns an empty store for one run.
func NewSharedDocuments() *SharedDocuments {
	return &SharedDocuments{parsed: map[string]*Document{}}
}

// HashedSource is a Source that names each document as the server's
// listing does, for SharedDocuments.
type HashedSource interface {
	Source
	// OpenAPIV3URL is the server (its URL) and the server-relative URL,
	// with its hash, of gv's document in the server's listing.
	OpenAPIV3URL(gv schema.GroupVersion) (server, path string, err error)
}

// get is the document at key: parsed already from any server, or fetched
// with fetch once per server.
func (s *SharedDocuments) get(key serverURL, fetch func() (*Document, error)) (*Document, error) {
	s.mu.RLock()
	doc := s.parsed[key.url]
	s.mu.RUnlock()
	if doc != nil {
		return doc, nil
	}
	mine := false
	doc, err := s.fetches.get(key, func() (*Document, error) {
		mine = true
		doc, err := fetch()
		if err == nil {
			s.mu.Lock()
			s.parsed[key.url] = doc
			s.mu.Unlock()
		}
		return doc, err
	})
	if err != nil && !mine {
		return fetch()
	}
	return doc, err
}

// sharedKey is the key of gv's document in SharedDocuments; false when
// the document cannot be shared: no store, a source without URLs, a
// listing that failed (the fetch then reports it) or a URL without a hash.
func (r *Resolver) sharedKey(gv schema.GroupVersion) (serverURL, bool) {
	hashed, ok := r.cfg.Source.(HashedSource)
	if r.cfg.Shared == nil || !ok {
		return serverURL{}, false
	}
	server, path, err := hashed.OpenAPIV3URL(gv)
	if err != nil {
		return serverURL{}, false
	}
	u, err := url.Parse(path)
	if err != nil || u.Query().Get("hash") == "" {
		return serverURL{}, false
	}
	return serverURL{server: server, url: path}, true
}
