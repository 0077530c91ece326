package main

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
)

// versionOptions are the flags of `kapply version`.
type versionOptions struct {
	client bool
}

func newVersionCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version, and the server version when the cluster is reachable",
		Example: `  kapply version
  kapply version --client`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(streams.Out, "Client Version: %s\n", clientVersion())
			if opts.client {
				return nil
			}
			server, err := serverVersion(getter)
			if err != nil {
				fmt.Fprintf(streams.ErrOut, "Server Version: unavailable (%v)\n", err)
				return nil
			}
			fmt.Fprintf(streams.Out, "Server Version: %s\n", server)
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.client, "client", false, "print the client version only, without contacting the server")
	return cmd
}

// clientVersion is the module version `go install ...@version` records, or
// "(devel)" for a build from a work tree.
func clientVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}

func serverVersion(getter *genericclioptions.ConfigFlags) (string, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return "", err
	}
	cfg.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return "", err
	}
	return info.GitVersion, nil
}
