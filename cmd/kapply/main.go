//go:build !gendocs

// Command kapply manages Kubernetes objects declaratively from files, with a
// three-way merge that also understands custom resources.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	kcluster "github.com/kapply/kapply/pkg/cluster"
)

func main() {
	limitMemory()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	stopProfiles := startProfiles(streams.ErrOut)
	code := exitCode(run(os.Args[1:], streams), streams.ErrOut)
	stopProfiles()
	kcluster.StopExecPlugins() // none outlives kapply, even one a given-up request left running
	os.Exit(code)
}
