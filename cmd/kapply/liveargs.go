package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
)

// errNoResourcesFound: delete's arguments named objects by selector and
// none matched; kubectl says "No resources found" and exits 0 (and says
// nothing for names --ignore-not-found let go).
var errNoResourcesFound = errors.New("No resources found")

// errNothingLeft: every object the arguments named was missing, and
// --ignore-not-found let them go: nothing to do, exit 0.
var errNothingLeft = errors.New("nothing to delete")

// connect reads what delete deletes: the objects the files declare, or
// those TYPE NAME / TYPE/NAME arguments (TYPE with -l) name on the server,
// as kubectl delete takes them — not both, in kubectl's words.
func (opts deleteOptions) connect(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, args []string, run clusterRun) (*apply.Applier, apply.Input, error) {
	if len(args) == 0 {
		files := load.Files{Filenames: opts.filenames, Recursive: opts.recursive, Kustomize: opts.kustomize}
		return loadAndConnect(ctx, getter, stdin, files, opts.selector, applierConfig{parallel: opts.parallel}.withApplier(run))
	}
	if len(opts.filenames) > 0 || opts.kustomize != "" {
		return nil, apply.Input{}, load.ErrArgsAndFiles
	}
	objects, errs := load.ReadLiveArgs(getter, args, opts.selector)
	if opts.ignoreNotFound {
		errs = slices.DeleteFunc(errs, apierrors.IsNotFound)
	}
	switch {
	case len(objects) > 0 || len(errs) > 0:
	case opts.selector != "":
		return nil, apply.Input{}, errNoResourcesFound
	default:
		return nil, apply.Input{}, errNothingLeft
	}
	knowSecrets(objects)
	applier, err := newApplier(getter, applierConfig{parallel: opts.parallel}.withApplier(run))
	return applier, inputOf(objects, errs), err
}

// connectTargets is connect (the objects of -f, as the files declare
// them) or, given TYPE/NAME arguments instead, the objects on the server
// as their last apply declared them: the last-applied record (Secret
// values as recorded), or the live object when it has none, which the
// command then reports as it reports a live object without a record.
func (f fileFlags) connectTargets(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, args []string, readFailure func(error) error, cfg applierConfig) (recordRun, error) {
	if len(args) == 0 {
		return f.connect(ctx, getter, stdin, readFailure, cfg)
	}
	if len(f.filenames) > 0 {
		return recordRun{}, withCode(exitError, load.ErrArgsAndFiles)
	}
	targets, err := known(load.ReadLive(ctx, getter, args, load.Files{}))
	if err != nil {
		return recordRun{}, readFailure(err)
	}
	for _, t := range targets {
		declared, err := lastapplied.Declared(t.Obj)
		if err != nil {
			return recordRun{}, withCode(exitError, apply.ErrorOf(t.Obj, t.Where(), err))
		}
		t.Obj = declared
	}
	applier, err := newApplier(getter, cfg)
	if err != nil {
		return recordRun{}, withCode(exitError, err)
	}
	return recordRun{targets: targets, applier: applier}, nil
}

// nothingToDelete reports whether err says delete's arguments left nothing
// to delete, printing kubectl's "No resources found" where it does
// (stdout, but not among -o events' lines).
func nothingToDelete(stdout io.Writer, err error, printer *eventPrinter) bool {
	if errors.Is(err, errNoResourcesFound) && printer.json == nil {
		fmt.Fprintln(stdout, err)
	}
	return errors.Is(err, errNoResourcesFound) || errors.Is(err, errNothingLeft)
}
