package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// Set at link time by the release build (.goreleaser.yaml's ldflags:
// -X main.gitVersion=v1.2.3 ...). Empty in a plain `go build` or
// `go install`, where clientVersion falls back to the build info.
var (
	gitVersion   string
	gitCommit    string
	gitTreeState string
	buildDate    string
)

// versionOptions are the flags of `kapply version`.
type versionOptions struct {
	client bool
	output string
}

// versionInfo is kubectl's `version -o json|yaml` document
// (k8s.io/kubectl/pkg/cmd/version.Version) without kustomizeVersion:
// kapply links kustomize's api module, not the kustomize CLI whose
// version kubectl reports there.
type versionInfo struct {
	ClientVersion *apimachineryversion.Info `json:"clientVersion,omitempty"`
	ServerVersion *apimachineryversion.Info `json:"serverVersion,omitempty"`
}

func newVersionCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version, and the server version when the cluster is reachable",
		Example: `  kapply version
  kapply version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.output != "" && opts.output != "yaml" && opts.output != "json" {
				return errors.New(`--output must be 'yaml' or 'json'`)
			}
			client := clientVersion()
			info := versionInfo{ClientVersion: &client}
			var serverErr error
			if !opts.client {
				info.ServerVersion, serverErr = serverVersion(getter)
			}
			if err := printVersion(streams, info, opts.output); err != nil {
				return err
			}
			// As kubectl: the client version printed, then the server's
			// error (its sentence for a refused connection), exit 1.
			if serverErr != nil {
				unreachable, _ := asUnreachable(serverErr)
				return withCode(exitFailed, unreachable)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.client, "client", false, "print the client version only, without contacting the server")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}

// printVersion writes info as kubectl's version command does: the git
// versions as text, or the whole document as indented JSON or YAML.
func printVersion(streams genericiooptions.IOStreams, info versionInfo, output string) error {
	var data []byte
	var err error
	switch output {
	case "":
		fmt.Fprintf(streams.Out, "Client Version: %s\n", info.ClientVersion.GitVersion)
		if info.ServerVersion != nil {
			fmt.Fprintf(streams.Out, "Server Version: %s\n", info.ServerVersion.GitVersion)
		}
		return nil
	case "json":
		data, err = json.MarshalIndent(info, "", "  ")
	default:
		data, err = yaml.Marshal(info)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(streams.Out, string(data))
	return err
}

// clientVersion describes this binary in the shape of Kubernetes'
// version.Info: the release build's link-time values, or else what the Go
// toolchain recorded (the module version of `go install ...@version`, the
// VCS revision of a build in a git work tree), or "(devel)".
func clientVersion() apimachineryversion.Info {
	info := apimachineryversion.Info{
		GitVersion:   gitVersion,
		GitCommit:    gitCommit,
		GitTreeState: gitTreeState,
		BuildDate:    buildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
	if build, ok := debug.ReadBuildInfo(); ok {
		if info.GitVersion == "" && build.Main.Version != "" {
			info.GitVersion = build.Main.Version
		}
		fillFromVCS(&info, build.Settings)
	}
	if info.GitVersion == "" {
		info.GitVersion = "(devel)"
	}
	if v, err := utilversion.ParseSemantic(info.GitVersion); err == nil {
		info.Major, info.Minor = strconv.FormatUint(uint64(v.Major()), 10), strconv.FormatUint(uint64(v.Minor()), 10)
	}
	return info
}

// fillFromVCS fills what the link-time values left empty from the VCS
// stamp `go build` records in a git work tree (-buildvcs). Its time is the
// commit's, which the release build also uses as its build date so that
// a rebuild of the same commit is byte for byte the same.
func fillFromVCS(info *apimachineryversion.Info, settings []debug.BuildSetting) {
	for _, s := range settings {
		switch {
		case s.Key == "vcs.revision" && info.GitCommit == "":
			info.GitCommit = s.Value
		case s.Key == "vcs.modified" && info.GitTreeState == "":
			info.GitTreeState = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
		case s.Key == "vcs.time" && info.BuildDate == "":
			info.BuildDate = s.Value
		}
	}
}

func serverVersion(getter *genericclioptions.ConfigFlags) (*apimachineryversion.Info, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return dc.ServerVersion()
}
