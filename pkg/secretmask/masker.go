package secretmask

import "sync"

// Masker masks in text the values of the Secrets added to it, as Text
// does. It is for an operation that meets Secrets as it goes (the files',
// then the live objects') and masks many texts: each value's forms are
// computed once, before the first text that follows its adding (an
// operation that masks no text computes none), not for every text. The
// zero Masker
// masks nothing; a nil one neither. Safe for concurrent use.
type Masker struct {
	mu                     sync.RWMutex
	values                 map[string]bool
	names, namespaces      []string
	knownNames, knownSpace map[string]bool
	forms                  []string
	seenForms              map[string]bool
	// pending are the Secrets added since the forms were last computed.
	pending []map[string]any
}

// Add adds the values, name and namespace of each v1 Secret among objs
// (others, and nil ones, are skipped). The objects are read when the next
// text is masked: they must not change before.
func (m *Masker) Add(objs ...map[string]any) {
	for _, obj := range objs {
		if IsSecret(obj) {
			m.mu.Lock()
			m.pending = append(m.pending, obj)
			m.mu.Unlock()
		}
	}
}

// compile computes the forms of the values of the pending Secrets.
func (m *Masker) compile() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return
	}
	values, names, namespaces := secretValues(m.pending)
	m.pending = nil
	if m.values == nil {
		m.values, m.knownNames, m.knownSpace, m.seenForms = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	m.names = appendNew(m.names, m.knownNames, names)
	m.namespaces = appendNew(m.namespaces, m.knownSpace, namespaces)
	for _, v := range values {
		if !m.values[v] {
			m.values[v] = true
			m.forms = appendForms(m.forms, m.seenForms, v)
		}
	}
}

// appendNew appends the items known does not hold, and records them.
func appendNew(list []string, known map[string]bool, items []string) []string {
	for _, item := range items {
		if !known[item] {
			known[item] = true
			list = append(list, item)
		}
	}
	return list
}

// Text returns text with every value added so far masked (see the
// function Text).
func (m *Masker) Text(text string) string {
	if m == nil || text == "" {
		return text
	}
	m.compile()
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.forms) == 0 {
		return text
	}
	protected := append(identitySpans(text, namePlaces, m.names), identitySpans(text, namespacePlaces, m.namespaces)...)
	var found []span
	for _, f := range m.forms {
		for _, s := range occurrences(text, f) {
			if !overlapsAny(s, protected) {
				found = append(found, s)
			}
		}
	}
	return replaceSpans(text, found)
}
