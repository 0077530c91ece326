package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/fleet"
)

// clusters are the contexts the flags pick, in order: those of
// --clusters-file (in its order), of a plan file (in its order) or of the
// kubeconfig (sorted), narrowed by --contexts and --cluster-selector.
func (f *fleetFlags) clusters(getter *genericclioptions.ConfigFlags) ([]fleet.Cluster, error) {
	raw, err := getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig's contexts: %w", err)
	}
	picked, err := fleet.Pick(fleet.Selection{Known: slices.Collect(maps.Keys(raw.Contexts)), ClustersFile: f.clustersFile, Planned: f.planned, Patterns: f.contexts})
	if err != nil {
		return nil, err
	}
	if f.selector != "" {
		selector, err := labels.Parse(f.selector)
		if err != nil {
			return nil, fmt.Errorf("--cluster-selector: %w", err)
		}
		picked = fleet.Filter(picked, selector)
	}
	if len(picked) == 0 {
		return nil, errors.New("no context to run in: the kubeconfig (or --clusters-file) holds none that the flags pick")
	}
	return picked, nil
}

// contextFlags are getter's kubeconfig flags for one context: every flag
// as given, the context overridden, a deadline no longer than the
// cluster's on each request (discovery has no other), and the server's
// warnings and its exec credential plugin's stderr printed to that
// cluster's stderr. They are new flags, not a
// copy, so that no client getter built for another context carries over.
func contextFlags(getter *genericclioptions.ConfigFlags, context string, timeout time.Duration, stderr io.Writer) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.CacheDir, f.KubeConfig = getter.CacheDir, getter.KubeConfig
	f.ClusterName, f.AuthInfoName, f.Namespace, f.APIServer = getter.ClusterName, getter.AuthInfoName, getter.Namespace, getter.APIServer
	f.TLSServerName, f.Insecure, f.CertFile, f.KeyFile, f.CAFile = getter.TLSServerName, getter.Insecure, getter.CertFile, getter.KeyFile, getter.CAFile
	f.BearerToken, f.Impersonate, f.ImpersonateUID = getter.BearerToken, getter.Impersonate, getter.ImpersonateUID
	f.ImpersonateGroup, f.ImpersonateUserExtra = getter.ImpersonateGroup, getter.ImpersonateUserExtra
	f.Username, f.Password, f.Timeout = getter.Username, getter.Password, getter.Timeout
	f.DisableCompression, f.ProxyURL = getter.DisableCompression, getter.ProxyURL
	f.Context = &context
	wrap := getter.WrapConfigFn
	f.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		if wrap != nil {
			cfg = wrap(cfg)
		}
		kcluster.RunExecPluginOurselves(cfg, stderr) // the plugin's stderr too is this cluster's
		cfg.WarningHandler = newCommandWarnings(stderr)
		if timeout > 0 && (cfg.Timeout == 0 || cfg.Timeout > timeout) {
			cfg.Timeout = timeout
		}
		return cfg
	}
	return f
}
