package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kapply/kapply/internal/modroot"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// BinDirEnv names the environment variable that overrides where the
// kube-apiserver and etcd binaries are looked up.
const BinDirEnv = "KAPPLY_K8S_BIN"

// ErrNoBinaries is returned by Start when bin/kube-apiserver or bin/etcd is
// missing; `make k8s-bin` builds them.
var ErrNoBinaries = errors.New("kube-apiserver and etcd binaries not found: run `make k8s-bin`")

// Cluster is a running etcd + kube-apiserver.
type Cluster struct {
	env *envtest.Environment
	// Config authenticates as an admin (group system:masters).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the admin user.
	Kubeconfig string
	// restarted holds the processes Restart started in place of envtest's.
	restarted map[string]*exec.Cmd
}

// Start launches etcd and kube-apiserver on free loopback ports and waits until
// the API server is ready. The kubeconfig is written to kubeconfigPath, or to a
// temporary file when it is empty.
func Start(kubeconfigPath string) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	configureAPIServer(env)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s: %w", bin, err)
	}
	c := &Cluster{env: env, Config: cfg}
	if c.Kubeconfig, err = writeKubeconfig(kubeconfigPath, env.KubeConfig); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// configureAPIServer sets the flags envtest does not set by default. The
// endpoint reconciler is off because the advertise address is loopback, which
// the API server refuses to publish as the kubernetes Service endpoint.
func configureAPIServer(env *envtest.Environment) {
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("endpoint-reconciler-type", "none")
	args.Set("advertise-address", "127.0.0.1")
}

// Stop stops exactly the processes Start started and removes their data.
func (c *Cluster) Stop() error {
	if err := c.stopRestarted(); err != nil {
		return errors.Join(err, c.env.Stop())
	}
	if err := c.env.Stop(); err != nil {
		return fmt.Errorf("stopping etcd and kube-apiserver: %w", err)
	}
	return nil
}

// BinDir returns the folder holding kube-apiserver and etcd: $KAPPLY_K8S_BIN,
// or bin/ at the root of the module containing the working directory.
func BinDir() (string, error) {
	dir, err := modroot.EnvOrBelow(BinDirEnv, "bin")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%w (looked in %s)", ErrNoBinaries, dir)
		}
	}
	return dir, nil
}

func writeKubeconfig(path string, data []byte) (string, error) {
	if path == "" {
		f, err := os.CreateTemp("", "kapply-kubeconfig-*")
		if err != nil {
			return "", fmt.Errorf("writing kubeconfig: %w", err)
		}
		path = f.Name()
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("writing kubeconfig: %w", err)
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return path, nil
}
