package testcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Fault is what a Proxy does with one request.
type Fault struct {
	// Status, when not zero, answers with this code and a Status body
	// instead of forwarding; RetryAfter, when not zero, is sent as the
	// Retry-After header, in seconds.
	Status     int
	RetryAfter int
	// Reason, with Status, is the Status body's reason ("Expired", say),
	// which clients read to tell one 410 from another.
	Reason string
	// Delay waits this long before doing the rest.
	Delay time.Duration
	// Reset closes the client's connection without an answer (a TCP reset),
	// before forwarding anything.
	Reset bool
	// LoseAnswer forwards the request, waits for the API server's answer
	// (the write is stored), then resets the client's connection.
	LoseAnswer bool
	// Warning, when set, is added to the forwarded answer as a Warning
	// header (code 299), as an admission webhook's warning arrives.
	Warning string
}

// Pass forwards the request untouched.
var Pass = Fault{}

// Rule decides the fault for each request; n counts the requests the proxy
// has seen, from 1.
type Rule func(req *http.Request, n int64) Fault

// Proxy is a plain-HTTP front of the cluster's API server. It forwards each
// request with the admin's credentials, unless its rule injects a fault.
type Proxy struct {
	// URL is the proxy's address, http://127.0.0.1:PORT.
	URL string
	// Kubeconfig is a kubeconfig file pointing at URL.
	Kubeconfig string

	t        testing.TB
	server   *httptest.Server
	forward  *httputil.ReverseProxy
	upstream http.RoundTripper
	target   *url.URL
	seen     atomic.Int64

	mu     sync.Mutex
	rule   Rule
	counts map[string]int
}

// StartProxy starts a Proxy that passes every request until SetRule; it
// stops with the test.
func (c *Cluster) StartProxy(t testing.TB) *Proxy {
	t.Helper()
	target, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatalf("parsing the API server's address: %v", err)
	}
	upstream, err := rest.TransportFor(c.Config)
	if err != nil {
		t.Fatalf("creating the proxy's transport: %v", err)
	}
	p := &Proxy{t: t, target: target, upstream: upstream, counts: map[string]int{}}
	p.forward = httputil.NewSingleHostReverseProxy(target)
	p.forward.Transport = upstream
	// A client that gave up (a cancelled run) is no error of the proxy's.
	p.forward.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) {
		w.WriteHeader(http.StatusBadGateway)
	}
	p.server = httptest.NewServer(p)
	t.Cleanup(p.server.Close)
	p.URL = p.server.URL
	p.Kubeconfig = writeProxyKubeconfig(t, p.URL)
	return p
}

// SetRule replaces the proxy's rule; nil passes everything.
func (p *Proxy) SetRule(rule Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule = rule
}

// Count is how many requests got the named treatment: "pass", "status",
// "reset", "lost" or "delay".
func (p *Proxy) Count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[name]
}

func (p *Proxy) count(name string) {
	p.mu.Lock()
	p.counts[name]++
	p.mu.Unlock()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := p.seen.Add(1)
	p.mu.Lock()
	rule := p.rule
	p.mu.Unlock()
	fault := Pass
	if rule != nil {
		fault = rule(req, n)
	}
	if fault.Delay > 0 {
		p.count("delay")
		select {
		case <-time.After(fault.Delay):
		case <-req.Context().Done():
			return
		}
	}
	switch {
	case fault.Reset:
		p.count("reset")
		p.reset(w)
	case fault.Status != 0:
		p.count("status")
		p.answer(w, fault)
	case fault.LoseAnswer:
		p.count("lost")
		p.loseAnswer(w, req)
	default:
		p.count("pass")
		if fault.Warning != "" {
			// The reverse proxy adds the server's headers to these.
			w.Header().Add("Warning", fmt.Sprintf("299 - %q", fault.Warning))
		}
		p.forward.ServeHTTP(w, req)
	}
}

// answer writes a Status with the fault's code, as the API server would.
func (p *Proxy) answer(w http.ResponseWriter, fault Fault) {
	if fault.RetryAfter != 0 {
		w.Header().Set("Retry-After", fmt.Sprint(fault.RetryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(fault.Status)
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q,"message":"injected by the test proxy: %s"}`,
		fault.Status, fault.Reason, http.StatusText(fault.Status))
	if _, err := io.WriteString(w, body); err != nil {
		p.t.Logf("proxy: answering %d: %v", fault.Status, err)
	}
}

// loseAnswer sends the request on, reads the whole answer, then resets the
// client's connection: the write happened, the client never hears of it.
func (p *Proxy) loseAnswer(w http.ResponseWriter, req *http.Request) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = p.target.Scheme, p.target.Host, "", ""
	resp, err := p.upstream.RoundTrip(out)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		err = errors.Join(err, resp.Body.Close())
	}
	if err != nil {
		p.t.Logf("proxy: forwarding %s %s: %v", req.Method, req.URL.Path, err)
	}
	p.reset(w)
}

// reset closes the client's connection with a TCP reset.
func (p *Proxy) reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		p.t.Errorf("proxy: connection cannot be hijacked")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		p.t.Errorf("proxy: hijacking: %v", err)
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		if err := tcp.SetLinger(0); err != nil {
			p.t.Logf("proxy: %v", err)
		}
	}
	if err := conn.Close(); err != nil {
		p.t.Logf("proxy: closing: %v", err)
	}
}

// writeProxyKubeconfig writes a kubeconfig without credentials (the proxy
// adds them) for url.
func writeProxyKubeconfig(t testing.TB, url string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: url}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("writing the proxy's kubeconfig: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatalf("writing the proxy's kubeconfig: %v", err)
	}
	return path
}
