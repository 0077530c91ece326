package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/schema"
)

// loadAndConnect reads the files first — a bad file is reported before any
// request — then builds the library's Applier from the kubeconfig flags,
// with kubectl's disk-cached discovery for the REST mapping and schemas.
// "-" reads stdin; --request-timeout bounds the read of each URL (the
// loader takes it from getter). A load that ctx cut short (a signal) fails
// as a whole, naming what it did not read.
func loadAndConnect(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, files load.Files, selector string, cfg applierConfig) (*apply.Applier, apply.Input, error) {
	files.Stdin = stdin
	objects, errs := load.LoadContext(ctx, getter, files, selector)
	if ctx.Err() != nil && len(errs) > 0 {
		return nil, apply.Input{}, errors.Join(errs...)
	}
	applier, err := newApplier(getter, cfg)
	return applier, inputOf(objects, errs), err
}

// inputOf is what pkg/load read, as pkg/apply takes it.
func inputOf(objects []*load.Object, errs []error) apply.Input {
	objs, sources := load.Split(objects)
	return apply.Input{Objects: objs, Sources: sources, Errors: errs}
}

// applierConfig are the flags that configure the Applier itself rather
// than one of its calls.
type applierConfig struct {
	// mergeKeys are --merge-key and --merge-key-file's declared keys.
	mergeKeys []schema.Override
	// parallel is --parallel (0: apply.DefaultParallel).
	parallel int
	// sharedSchemas are the OpenAPI documents of a run over several
	// contexts, parsed once for all (nil in one context).
	sharedSchemas *schema.SharedDocuments
	// connected is the Applier a run over several contexts built for the
	// cluster (pkg/fleet's Connect): used as it is; nil in one context.
	connected *apply.Applier
}

// withApplier is cfg with the Applier run was given, if any.
func (cfg applierConfig) withApplier(run clusterRun) applierConfig {
	cfg.connected = run.applier
	return cfg
}

// newApplier builds an Applier from the kubeconfig flags.
func newApplier(getter genericclioptions.RESTClientGetter, cfg applierConfig) (*apply.Applier, error) {
	if cfg.connected != nil {
		return cfg.connected, nil
	}
	restConfig, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading cluster configuration: %w", err)
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("creating REST mapper: %w", err)
	}
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	clients, err := apply.NewClients(restConfig, mapper, dc, cfg.mergeKeys)
	if err != nil {
		return nil, err
	}
	clients.Parallel, clients.SharedSchemas = cfg.parallel, cfg.sharedSchemas
	return apply.NewApplier(clients), nil
}
