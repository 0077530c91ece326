package main

import (
	"fmt"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/load"
)

// commandWarnings prints the API server's warnings on requests outside an
// apply run (the ownership commands, discovery) as kubectl does —
// "Warning: TEXT" on stderr, each text once — with the values of every
// Secret the command has read masked (knowSecrets): a warning may quote an
// object (an admission webhook's, a deprecation's). apply's runs hand their
// warnings to each object's event instead, masked by pkg/apply.
type commandWarnings struct {
	w io.Writer

	mu   sync.Mutex
	seen map[string]bool
}

// knownSecrets are the Secrets the process has read, whose values no
// warning prints. A process runs one command; tests that run many in one
// process only mask more.
var knownSecrets kcluster.Secrets

func newCommandWarnings(w io.Writer) *commandWarnings {
	return &commandWarnings{w: w, seen: map[string]bool{}}
}

// HandleWarningHeader implements rest.WarningHandler.
func (c *commandWarnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[text] {
		return
	}
	c.seen[text] = true
	fmt.Fprintf(c.w, "Warning: %s\n", knownSecrets.Text(text))
}

// print prints warnings the library gathered, as HandleWarningHeader.
func (c *commandWarnings) print(texts []string) {
	for _, text := range texts {
		c.printOne(text)
	}
}

// printOne prints one warning the library gathered.
func (c *commandWarnings) printOne(text string) { c.HandleWarningHeader(299, "", text) }

// knowSecrets adds the values of the Secrets among the objects (and of
// their records) to those no warning prints.
func knowSecrets(objects []*load.Object) {
	var objs []*unstructured.Unstructured
	for _, o := range objects {
		objs = append(objs, o.Obj)
	}
	knowObjects(objs...)
}

// knowObjects adds the values of the Secrets among objs (live objects a
// command read, whose values a webhook's warning may quote) to those no
// warning prints.
func knowObjects(objs ...*unstructured.Unstructured) {
	knownSecrets.Add(objs...)
}

// known is knowSecrets for what a read returns, passed through.
func known(objects []*load.Object, err error) ([]*load.Object, error) {
	knowSecrets(objects)
	return objects, err
}
