package main

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/schema"
)

// loadAndConnect reads the files first — a bad file is reported before any
// request — then builds the library's Applier from the kubeconfig flags,
// with kubectl's disk-cached discovery for the REST mapping and schemas.
func loadAndConnect(getter genericclioptions.RESTClientGetter, files load.Files, selector string, mergeKeys []schema.Override) (*apply.Applier, apply.Input, error) {
	objects, errs := load.Load(getter, files, selector)
	in := apply.Input{Objects: objects, Errors: errs}
	applier, err := newApplier(getter, mergeKeys)
	return applier, in, err
}

// newApplier builds an Applier from the kubeconfig flags.
func newApplier(getter genericclioptions.RESTClientGetter, mergeKeys []schema.Override) (*apply.Applier, error) {
	cfg, err := getter.ToRESTConfig()
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
	clients, err := apply.NewClients(cfg, mapper, dc, mergeKeys)
	if err != nil {
		return nil, err
	}
	return apply.NewApplier(clients), nil
}
