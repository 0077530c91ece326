package load

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	runtimeobj "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kapply/kapply/internal/offswitch"
)

// localReadOn is false under KAPPLY_LOCALREAD=off: every input is still
// read once by readInput, and its bytes are all given to the builder.
var localReadOn = !offswitch.Off("KAPPLY_LOCALREAD")

// readLocal gives, for the inputs listInputs lists for files, input by
// input, exactly what build gives for files — the same infos in the same
// order, the same errors (collect puts them together) — and, for each
// input it read, the documents refuseLossyDocuments would refuse. Each input is read once (readInput), within ctx and up to
// MaxInputSize: a FIFO or stdin cannot be read twice.
//
// It is written by hand because the resource builder cannot be given
// another decoder, and its own decodes each YAML document three times:
// sigs.k8s.io/yaml parses it and marshals it to JSON, the unstructured
// decoder reads the JSON into a map, and the metadata check reads it again
// into ObjectMeta; the duplicate-key check then read every file a second
// time. Here each file is read once and each document parsed once, by
// yaml.v2 as the builder parses it, into the map the builder would hold
// (jsonValue), on every core.
//
// An input whose content readLocal does not follow (the fallback reasons in
// convert.go) is given to the builder as the bytes read, alone: the builder
// reads each input on its own, so its objects and errors for one input are
// those it gives for the input among others. Errors are therefore the
// builder's, but for an input too large or not read before ctx was done.
//
// It is false when the selector does not parse (the builder then says
// why). loadWithLines is its one caller.
func readLocal(ctx context.Context, getter genericclioptions.RESTClientGetter, files Files, inputs []input, selector string) ([]*localFile, bool) {
	var sel labels.Selector
	if s := strings.TrimSpace(selector); s != "" {
		var err error
		if sel, err = labels.Parse(s); err != nil {
			return nil, false
		}
	}
	return readFiles(ctx, getter, inputs, files, sel, selector), true
}

// collect puts the files' infos, errors and refused documents together, in
// the files' order.
func collect(read []*localFile) ([]*resource.Info, []error, map[string][]lossyDocument) {
	var infos []*resource.Info
	var errs []error
	checked := map[string][]lossyDocument{}
	for _, f := range read {
		infos = append(infos, f.infos...)
		errs = append(errs, f.errs...)
		if f.checked {
			checked[f.source] = f.lossy
		}
	}
	return infos, errs, checked
}

// localFile is one input (a file, stdin or a URL) as readLocal reads it.
type localFile struct {
	input
	data []byte
	// json: the builder reads the file as a JSON stream (it opens with
	// '{'), not as YAML documents.
	json bool
	docs []localDocument
	// fallback is why the builder reads the file; "" when readLocal does.
	fallback string
	// readErr is why the input was not read: for a file that does not
	// open, the builder's error, as its file visitor opens the file.
	readErr error
	// lossy are the documents refuseLossyDocuments refuses; checked tells
	// they are known.
	lossy   []lossyDocument
	checked bool
	infos   []*resource.Info
	errs    []error
	// infoLines are the lines of the infos' documents, when known.
	infoLines []int
}

// localDocument is one document of a file, or one value of a JSON stream.
type localDocument struct {
	data []byte
	obj  runtimeobj.Object // nil: skipped (empty, null)
	line int               // of its first content; 0: unknown
	why  string            // a fallback reason
	// lossy is why refuseLossyDocuments refuses the document (a JSON
	// document's key set twice), counted when counted is set.
	lossy   error
	counted bool
}

// readFiles reads inputs in three passes over every core: the inputs
// (read, split into documents), their documents (parsed), and again the
// inputs (objects listed and filtered, or the builder run on the bytes).
func readFiles(ctx context.Context, getter genericclioptions.RESTClientGetter, inputs []input, files Files, sel labels.Selector, selector string) []*localFile {
	read := make([]*localFile, len(inputs))
	// Regular files are read on every core; the other inputs (stdin,
	// FIFOs, devices, URLs) one after the other, in order, as the builder
	// reads them: two of them may be one stream (-f - -f /dev/stdin, a
	// FIFO named twice), whose bytes two reads at once would share.
	forEach(len(inputs), func(i int) {
		if isRegularFile(inputs[i]) {
			read[i] = splitInput(ctx, inputs[i], files)
		}
	})
	for i, f := range read {
		if f == nil {
			read[i] = splitInput(ctx, inputs[i], files)
		}
	}
	type ref struct{ file, doc int }
	var docs []ref
	for i, f := range read {
		for j := range f.docs {
			docs = append(docs, ref{i, j})
		}
	}
	forEach(len(docs), func(i int) {
		f := read[docs[i].file]
		d := &f.docs[docs[i].doc]
		if f.json {
			d.obj, d.why = jsonObject(d.data)
			return
		}
		d.obj, d.why = yamlObject(d.data)
		if d.counted = !isEmptyDocument(d.data); d.counted {
			d.lossy, _ = jsonDuplicateKey(d.data)
		}
	})
	forEach(len(read), func(i int) {
		f := read[i]
		if f.fallback == "" {
			f.fallback = f.list(sel)
		}
		switch {
		case f.readErr != nil:
			f.errs = []error{f.readErr}
		case f.fallback != "":
			f.infos, f.errs = buildRead(getter, f, selector)
			f.infoLines = linesByDeclaration(f.docs, f.infos)
		}
		// list found the refused documents of the YAML it read; those of
		// other files are looked for in the bytes read, when the file gave
		// objects (refuseLossyDocuments looks at no other).
		if f.checked && (f.json || f.fallback != "") {
			f.lossy, f.checked = nil, len(f.infos) > 0
			if f.checked {
				f.lossy = lossyDocumentsIn(f.source, f.data)
			}
		}
		f.data, f.docs = nil, nil
	})
	return read
}

// forEach calls fn(i) for every i below n, on every core.
func forEach(n int, fn func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}
