package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// Files says which files to load, as kubectl's -f, -R and -k do.
type Files struct {
	Filenames []string
	Recursive bool
	Kustomize string
	// Stdin is what "-" reads; the process's standard input when nil.
	Stdin io.Reader
	// RequestTimeout bounds the read of each URL, all its attempts
	// included; when 0, the getter's (kubectl's --request-timeout), if
	// any.
	RequestTimeout time.Duration
}

// LoadContext reads every object from the files, without asking the
// server: mapping waits until CRDs of the same run are established. It
// returns the objects it could read and, separately, one error per file
// (or document) it could not; a bad file never hides the good ones. Each
// file, stdin and URL is read once, up to MaxInputSize; when ctx is done,
// the reads still going are abandoned and fail with ctx's cause (then
// the caller should not go on with what was read).
func LoadContext(ctx context.Context, getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*Object, []error) {
	return loadWithLines(ctx, getter, files, selector)
}

// Load is LoadContext that no one cancels, for programs and tests that read
// only files they wrote.
func Load(getter genericclioptions.RESTClientGetter, files Files, selector string) ([]*Object, []error) {
	return LoadContext(context.Background(), getter, files, selector)
}

// objectsOfInfos turns the builder's infos into objects, and refuses those
// without apiVersion and those of documents refuseLossyDocuments refuses.
func objectsOfInfos(infos []*resource.Info, errs []error, checked map[string][]lossyDocument) ([]*Object, []error) {
	var objects []*Object
	read := map[string]int{}
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return objects, append(errs, fmt.Errorf("%s: unexpected object type %T", info.Source, info.Object))
		}
		read[info.Source]++
		if u.GetAPIVersion() == "" {
			errs = append(errs, fmt.Errorf("error validating %q: error validating data: %w", info.Source, ErrNoAPIVersion))
			continue
		}
		objects = append(objects, &Object{Source: info.Source, Index: read[info.Source], Obj: u})
	}
	objects, lossy := refuseLossyDocuments(objects, checked)
	return objects, append(errs, lossy...)
}

// ErrNoAPIVersion reports an object without apiVersion, in kubectl's words.
// The resource builder maps such an object to the kind's preferred version;
// kapply refuses it, as kubectl's validation does.
var ErrNoAPIVersion = errors.New("apiVersion not set")

// splitErrors flattens the aggregate the resource builder returns.
func splitErrors(err error) []error {
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		return utilerrors.Flatten(agg).Errors()
	}
	return []error{err}
}
