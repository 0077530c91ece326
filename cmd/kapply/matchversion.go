package main

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
)

// addMatchServerVersionFlag adds kubectl's global --match-server-version,
// which scripts written for kubectl pass to every command.
func addMatchServerVersionFlag(flags *pflag.FlagSet, match *bool) {
	flags.BoolVar(match, "match-server-version", false, "require the server's minor version to be the one kapply is built for (that of its client-go: client-go v0.X.Y is Kubernetes v1.X)")
}

// checkServerVersion is kubectl's --match-server-version check. kubectl
// requires the server's gitVersion, gitCommit and gitTreeState to be its
// own: client and server come from one Kubernetes build. kapply is not
// part of that build; what it must match is the API it is built for, the
// Kubernetes minor of its client-go, so the server's gitVersion must be of
// that minor (v1.X.*).
func checkServerVersion(getter *genericclioptions.ConfigFlags) error {
	want := matchedMinor()
	if want == "" {
		return fmt.Errorf("--match-server-version: this kapply binary does not record the client-go version it was built with")
	}
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return err
	}
	cfg.Timeout = 30 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("couldn't read version from server: %v", err)
	}
	if !strings.HasPrefix(info.GitVersion, want+".") {
		return fmt.Errorf("server version (%s) differs from client version (%s, the Kubernetes minor kapply is built for)", info.GitVersion, want)
	}
	return nil
}

// matchedMinor is v1.X for the k8s.io/client-go v0.X.Y in the binary's
// build information, or "" without one.
func matchedMinor() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range info.Deps {
		if dep.Path != "k8s.io/client-go" {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if v, ok := strings.CutPrefix(dep.Version, "v0."); ok {
			minor, _, _ := strings.Cut(v, ".")
			return "v1." + minor
		}
	}
	return ""
}
