package cluster

import (
	"fmt"
	"io"
	"net/http"
	"sync"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/utils/dump"

	"github.com/kapply/kapply/internal/offswitch"
)

// execPluginsOurs: kapply runs the kubeconfig's exec credential plugins
// itself unless KAPPLY_EXECPLUGIN=off hands them back to client-go.
var execPluginsOurs = !offswitch.Off("KAPPLY_EXECPLUGIN")

// RunExecPluginOurselves takes cfg's exec credential plugin away from
// client-go and runs it the same way (the ExecCredential protocol, with
// kubectl's credential plugin policy) under kapply's rules: the plugin
// runs under the context of the request that needs the credential, and is
// killed (with its process group) when that context ends or when kapply
// exits (StopExecPlugins); its stderr goes through a pipe copied to
// stderr, so that nothing it leaves behind holds kapply's stderr open.
//
// client-go cannot be made to do this: its exec authenticator starts the
// plugin with exec.Command (no context), hands it the process's own
// os.Stderr, waits for it under a lock no request deadline reaches, and
// leaves it running when the program exits — a hung plugin held
// `kapply apply --contexts ... 2>&1 | cat` for as long as it lived.
//
// Credentials are cached per plugin and server for the process, as
// client-go's are. A config that already carries a token, a password or
// a client certificate never runs its plugin, as with client-go; cfg
// without a plugin is left alone. Errors of the plugin's configuration
// come with the first request, as client-go's do.
//
// Call it last on a config (after kuberc's policy is set on the plugin).
// On a config it was called on already, it only sends the plugin's
// stderr to stderr (one cluster's prefixed stream, in a run over many).
func RunExecPluginOurselves(cfg *rest.Config, stderr io.Writer) {
	if t, ok := cfg.Transport.(*execTransport); ok {
		t.mu.Lock()
		t.stderr = stderr
		t.mu.Unlock()
		return
	}
	if cfg.ExecProvider == nil || !execPluginsOurs {
		return
	}
	if cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		len(cfg.CertData) > 0 || cfg.CertFile != "" {
		cfg.ExecProvider = nil
		return
	}
	tlsOnly := &rest.Config{Host: cfg.Host, TLSClientConfig: cfg.TLSClientConfig, Proxy: cfg.Proxy, Dial: cfg.Dial,
		DisableCompression: cfg.DisableCompression}
	creds, err := execCredentialsFor(cfg)
	cfg.ExecProvider, cfg.TLSClientConfig = nil, rest.TLSClientConfig{}
	cfg.Transport = &execTransport{creds: creds, err: err, tlsOnly: tlsOnly, stderr: stderr}
}

// execTransport is the TLS transport client-go would build for the
// server, with the plugin's credential: its token in each request's
// Authorization header, or its client certificate in the TLS handshake.
// The client built on it adds its usual wrappers around it.
type execTransport struct {
	creds   *execCredentials
	err     error // the plugin's configuration was refused
	tlsOnly *rest.Config

	mu     sync.Mutex
	stderr io.Writer // the plugin's, when this transport runs it
	// byCert are the transports by the client certificate they present
	// ("" none), built once each.
	byCert map[string]http.RoundTripper
}

func (t *execTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		return nil, fmt.Errorf("getting credentials: %w", t.err)
	}
	if req.Header.Get("Authorization") != "" { // credentials given by the caller win, as in client-go
		base, err := t.transport(nil)
		if err != nil {
			return nil, err
		}
		return base.RoundTrip(req)
	}
	t.mu.Lock()
	stderr := t.stderr
	t.mu.Unlock()
	creds, err := t.creds.get(req.Context(), stderr)
	if err != nil {
		return nil, fmt.Errorf("getting credentials: %w", err)
	}
	base, err := t.transport(creds)
	if err != nil {
		return nil, err
	}
	if creds.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+creds.token)
	}
	res, err := base.RoundTrip(req)
	if err == nil && res.StatusCode == http.StatusUnauthorized {
		t.creds.expire(creds) // the next request asks the plugin again, as client-go does
	}
	return res, err
}

// transport is the TLS transport presenting creds' client certificate, if
// it holds one.
func (t *execTransport) transport(creds *execCreds) (http.RoundTripper, error) {
	key := ""
	cfg := rest.CopyConfig(t.tlsOnly)
	if creds != nil && creds.certPEM != "" {
		key = creds.certPEM + creds.keyPEM
		cfg.CertData, cfg.KeyData = []byte(creds.certPEM), []byte(creds.keyPEM)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rt, ok := t.byCert[key]; ok {
		return rt, nil
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the transport for the exec plugin's credentials: %w", err)
	}
	// Only client-go's debugging wrapper (at -v=6 and above) sits around
	// the TLS transport here; the client built on t adds its own.
	for {
		wrapper, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			break
		}
		rt = wrapper.WrappedRoundTripper()
	}
	if t.byCert == nil {
		t.byCert = map[string]http.RoundTripper{}
	}
	t.byCert[key] = rt
	return rt, nil
}

// execCredentialsFor is the process's credential cache of cfg's plugin on
// cfg's server, made on first use.
func execCredentialsFor(cfg *rest.Config) (*execCredentials, error) {
	plugin, err := newExecPlugin(cfg)
	if err != nil {
		return nil, err
	}
	key := cfg.Host + "\n" + dump.Pretty(cfg.ExecProvider) + "\n" + dump.Pretty(plugin.cluster)
	credentialCaches.mu.Lock()
	defer credentialCaches.mu.Unlock()
	if c, ok := credentialCaches.byKey[key]; ok {
		return c, nil
	}
	c := &execCredentials{plugin: plugin, turn: make(chan struct{}, 1)}
	credentialCaches.byKey[key] = c
	return c, nil
}

// credentialCaches are shared by every client of the process, as
// client-go's authenticators are: kapply builds several configs for one
// context (discovery, the mapper, the clients), and a plugin that asks
// the user to log in must do so once.
var credentialCaches = struct {
	mu    sync.Mutex
	byKey map[string]*execCredentials
}{byKey: map[string]*execCredentials{}}
