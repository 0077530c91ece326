package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/pkg/apis/clientauthentication/install"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientauthenticationv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"
	exechelper "k8s.io/client-go/plugin/pkg/client/auth/exec"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd/api"
)

// execInfoEnv carries the ExecCredential request to the plugin.
const execInfoEnv = "KUBERNETES_EXEC_INFO"

// maxPluginOutput bounds what is kept of a plugin's stdout: a credential
// is a few KiB; a plugin that writes without end is not read into memory.
const maxPluginOutput = 1 << 20

var execCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return serializer.NewCodecFactory(scheme)
}()

var execAPIVersions = map[string]schema.GroupVersion{
	clientauthenticationv1beta1.SchemeGroupVersion.String(): clientauthenticationv1beta1.SchemeGroupVersion,
	clientauthenticationv1.SchemeGroupVersion.String():      clientauthenticationv1.SchemeGroupVersion,
}

// execPlugin is a kubeconfig's exec credential plugin, as client-go reads it.
type execPlugin struct {
	config  api.ExecConfig
	command string // filepath.Clean'd, as the allowlist compares it
	group   schema.GroupVersion
	cluster *clientauthentication.Cluster // sent only with provideClusterInfo
}

func newExecPlugin(cfg *rest.Config) (execPlugin, error) {
	p := execPlugin{config: *cfg.ExecProvider, command: filepath.Clean(cfg.ExecProvider.Command)}
	group, ok := execAPIVersions[p.config.APIVersion]
	if !ok {
		return p, fmt.Errorf("exec plugin: invalid apiVersion %q", p.config.APIVersion)
	}
	p.group = group
	if err := exechelper.ValidatePluginPolicy(p.config.PluginPolicy); err != nil {
		return p, fmt.Errorf("invalid plugin policy: %w", err)
	}
	if p.config.ProvideClusterInfo {
		cluster, err := rest.ConfigToExecCluster(cfg)
		if err != nil {
			return p, err
		}
		p.cluster = cluster
	}
	return p, nil
}

// execCreds are what a plugin answered.
type execCreds struct {
	token           string
	certPEM, keyPEM string
	expires         time.Time // zero: until the server refuses them
}

// execCredentials run one plugin, one run at a time (it may ask the user
// something), and keep its answer until it expires.
type execCredentials struct {
	plugin execPlugin
	// turn is held while the plugin runs; a request waits for it only as
	// long as its context lets it.
	turn chan struct{}

	mu     sync.Mutex
	cached *execCreds
}

// get is the cached credential, or the plugin's new answer, run under ctx
// with its stderr copied to stderr.
func (c *execCredentials) get(ctx context.Context, stderr io.Writer) (*execCreds, error) {
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for exec plugin %s: %w", c.plugin.command, context.Cause(ctx))
	}
	defer func() { <-c.turn }()
	c.mu.Lock()
	cached := c.cached
	c.mu.Unlock()
	if cached != nil && (cached.expires.IsZero() || time.Now().Before(cached.expires)) {
		return cached, nil
	}
	creds, err := c.plugin.run(ctx, stderr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.cached = creds
	c.mu.Unlock()
	return creds, nil
}

// expire drops creds if they are still the cached ones.
func (c *execCredentials) expire(creds *execCreds) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached == creds {
		c.cached = nil
	}
}

// run runs the plugin under ctx and reads its ExecCredential.
func (p execPlugin) run(ctx context.Context, stderr io.Writer) (*execCreds, error) {
	interactive, err := p.interactive()
	if err != nil {
		return nil, fmt.Errorf("exec plugin cannot support interactive mode: %w", err)
	}
	request := &clientauthentication.ExecCredential{Spec: clientauthentication.ExecCredentialSpec{Interactive: interactive, Cluster: p.cluster}}
	data, err := runtime.Encode(execCodecs.LegacyCodec(p.group), request)
	if err != nil {
		return nil, fmt.Errorf("encode ExecCredentials: %w", err)
	}
	cmd := exec.CommandContext(ctx, p.command, p.config.Args...)
	cmd.Env = append(os.Environ(), execInfoEnv+"="+string(data))
	for _, env := range p.config.Env {
		cmd.Env = append(cmd.Env, env.Name+"="+env.Value)
	}
	if err := p.checkPolicy(cmd); err != nil {
		return nil, err
	}
	var stdout bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &stdout, left: maxPluginOutput}
	// Not stderr itself: an *os.File would be handed to the plugin, which
	// (or whatever it starts) could hold it open after kapply exits.
	cmd.Stderr = struct{ io.Writer }{stderr}
	if interactive {
		cmd.Stdin = os.Stdin
	}
	if err := runPlugin(cmd, interactive); err != nil {
		return nil, p.runError(ctx, err)
	}
	return p.decode(stdout.Bytes())
}

// interactive is client-go's rule: whether the plugin gets stdin.
func (p execPlugin) interactive() (bool, error) {
	onTerminal := term.IsTerminal(int(os.Stdin.Fd()))
	switch p.config.InteractiveMode {
	case api.NeverExecInteractiveMode:
		return false, nil
	case api.IfAvailableExecInteractiveMode:
		return !p.config.StdinUnavailable && onTerminal, nil
	case api.AlwaysExecInteractiveMode:
		if !onTerminal {
			return false, errors.New("standard input is not a terminal")
		}
		if p.config.StdinUnavailable {
			suffix := ""
			if p.config.StdinUnavailableMessage != "" {
				suffix = ": " + p.config.StdinUnavailableMessage
			}
			return false, fmt.Errorf("standard input is unavailable%s", suffix)
		}
		return true, nil
	}
	return false, fmt.Errorf("unknown interactiveMode: %q", p.config.InteractiveMode)
}

// runError says why the plugin gave no credential, in client-go's words,
// and whether the request's context ended it.
func (p execPlugin) runError(ctx context.Context, err error) error {
	var notFound *exec.Error
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("exec: executable %s killed, no credential before the request's end: %w", p.command, context.Cause(ctx))
	case errors.As(err, &notFound):
		msg := fmt.Sprintf("exec: executable %s not found", p.command)
		if p.config.InstallHint != "" {
			msg += "\n\n" + p.config.InstallHint
		}
		return errors.New(msg)
	case errors.As(err, &exit):
		return fmt.Errorf("exec: executable %s failed with exit code %d", p.command, exit.ExitCode())
	}
	return fmt.Errorf("exec: %w", err)
}

// decode reads the plugin's answer as client-go does.
func (p execPlugin) decode(stdout []byte) (*execCreds, error) {
	cred := &clientauthentication.ExecCredential{}
	_, gvk, err := execCodecs.UniversalDecoder(p.group).Decode(stdout, nil, cred)
	if err != nil {
		return nil, fmt.Errorf("decoding stdout: %w", err)
	}
	if gvk.Group != p.group.Group || gvk.Version != p.group.Version {
		return nil, fmt.Errorf("exec plugin is configured to use API version %s, plugin returned version %s",
			p.group, schema.GroupVersion{Group: gvk.Group, Version: gvk.Version})
	}
	status := cred.Status
	switch {
	case status == nil:
		return nil, errors.New("exec plugin didn't return a status field")
	case status.Token == "" && status.ClientCertificateData == "" && status.ClientKeyData == "":
		return nil, errors.New("exec plugin didn't return a token or cert/key pair")
	case (status.ClientCertificateData == "") != (status.ClientKeyData == ""):
		return nil, errors.New("exec plugin returned only certificate or key, not both")
	}
	creds := &execCreds{token: status.Token, certPEM: status.ClientCertificateData, keyPEM: status.ClientKeyData}
	if creds.certPEM != "" {
		if _, err := tls.X509KeyPair([]byte(creds.certPEM), []byte(creds.keyPEM)); err != nil {
			return nil, fmt.Errorf("failed parsing client key/certificate: %w", err)
		}
	}
	if status.ExpirationTimestamp != nil {
		creds.expires = status.ExpirationTimestamp.Time
	}
	return creds, nil
}

// limitedWriter keeps the first left bytes and drops the rest.
type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	n := len(b)
	if len(b) > l.left {
		b = b[:l.left]
	}
	l.left -= len(b)
	_, err := l.w.Write(b)
	return n, err
}
