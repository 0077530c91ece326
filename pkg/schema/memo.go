package schema

import "sync"

// memo computes each key's value once, even under concurrent calls: the
// first caller computes, the others wait for its result. An error goes to
// the callers that waited for that computation and is then forgotten, so
// the next caller computes again: a failure (a server that answered 503
// once) is never kept as the answer.
type memo[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]*memoEntry[V]
}

type memoEntry[V any] struct {
	once  sync.Once
	value V
	err   error
}

func (m *memo[K, V]) get(key K, compute func() (V, error)) (V, error) {
	e := m.entry(key)
	e.once.Do(func() { e.value, e.err = compute() })
	if e.err != nil {
		m.drop(key, e)
	}
	return e.value, e.err
}

func (m *memo[K, V]) entry(key K) *memoEntry[V] {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[K]*memoEntry[V]{}
	}
	e, ok := m.entries[key]
	if !ok {
		e = &memoEntry[V]{}
		m.entries[key] = e
	}
	return e
}

// drop forgets e, the failed computation of key, unless a newer one has
// taken its place.
func (m *memo[K, V]) drop(key K, e *memoEntry[V]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries[key] == e {
		delete(m.entries, key)
	}
}

// forget drops the keys matching drop, so they are computed again.
func (m *memo[K, V]) forget(drop func(K) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if drop(k) {
			delete(m.entries, k)
		}
	}
}
