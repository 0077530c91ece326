package load

import (
	"bytes"
	"context"
	"io"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// build runs the resource builder once on files.
func build(getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*resource.Info, []error) {
	return runBuilder(getter, selector, func(b *resource.Builder) *resource.Builder {
		return b.FilenameParam(false, &resource.FilenameOptions{
			Filenames: files.Filenames,
			Recursive: files.Recursive,
			Kustomize: files.Kustomize,
		})
	})
}

// buildWithin is build, abandoned when ctx is done (an error naming the
// input): kustomize, which the builder runs, may wait on what the
// kustomization names (a remote base, a FIFO), and takes no context.
func buildWithin(ctx context.Context, getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*resource.Info, []error) {
	source := files.Kustomize
	if source == "" {
		source = strings.Join(files.Filenames, ", ")
	}
	type built struct {
		infos []*resource.Info
		errs  []error
	}
	b, err := inBackground(ctx, source, func() (built, error) {
		infos, errs := build(getter, files, selector)
		return built{infos, errs}, nil
	}, func() {})
	if err != nil {
		return nil, []error{err}
	}
	return b.infos, b.errs
}

// buildRead runs the resource builder on the bytes read from f's input.
func buildRead(getter genericclioptions.RESTClientGetter, f *localFile, selector string) ([]*resource.Info, []error) {
	return runBuilder(getter, selector, func(b *resource.Builder) *resource.Builder {
		return b.Stream(readerOf(f.input, f.data), f.source)
	})
}

// readerOf gives data, read from in, as the builder reads in itself: a
// file or stdin decoded by its byte order mark (FileVisitor), a URL's body
// as it comes (URLVisitor).
func readerOf(in input, data []byte) io.Reader {
	if in.kind == urlInput {
		return bytes.NewReader(data)
	}
	return transform.NewReader(bytes.NewReader(data), unicode.BOMOverride(unicode.UTF8.NewDecoder()))
}

// withRequestTimeout sets files' RequestTimeout, when not set, to that of
// getter's configuration (kubectl's --request-timeout); none without one.
func withRequestTimeout(getter genericclioptions.RESTClientGetter, files Files) Files {
	if files.RequestTimeout == 0 {
		if cfg, err := getter.ToRESTConfig(); err == nil {
			files.RequestTimeout = cfg.Timeout
		}
	}
	return files
}

// runBuilder runs the resource builder once, without a server, on the
// input source adds.
func runBuilder(getter genericclioptions.RESTClientGetter, selector string, source func(*resource.Builder) *resource.Builder) ([]*resource.Info, []error) {
	builder := resource.NewBuilder(getter).
		Unstructured().
		Local().
		ContinueOnError()
	if selector != "" {
		builder = builder.LabelSelectorParam(selector)
	}
	infos, err := source(builder).Flatten().Do().Infos()
	return infos, splitErrors(err)
}
