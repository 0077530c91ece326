// Command cluster runs the local etcd + kube-apiserver (internal/testcluster)
// in the foreground until it gets SIGINT or SIGTERM; `make cluster-up` starts
// it in the background and `make cluster-down` stops it. The kubeconfig file is
// written only once the API server is ready, so its presence means "up".
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kapply/kapply/internal/testcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run() error {
	// Its own flag set: controller-runtime registers -kubeconfig on the global one.
	flags := flag.NewFlagSet("cluster", flag.ExitOnError)
	kubeconfig := flags.String("out", ".cluster/kubeconfig", "where to write the admin kubeconfig")
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	// Remove a stale kubeconfig first: its presence tells callers the cluster is up.
	if err := os.Remove(*kubeconfig); err != nil && !os.IsNotExist(err) {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	c, err := testcluster.Start(*kubeconfig + ".tmp")
	if err != nil {
		return err
	}
	if err := os.Rename(c.Kubeconfig, *kubeconfig); err != nil {
		return fmt.Errorf("publishing kubeconfig: %w", err)
	}
	fmt.Printf("cluster up: %s\n", c.Config.Host)
	<-stop
	if err := os.Remove(*kubeconfig); err != nil && !os.IsNotExist(err) {
		fmt.Fprintln(os.Stderr, "cluster:", err)
	}
	return c.Stop()
}
