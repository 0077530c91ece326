package apply_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
)

// flakyServer stands in front of the real API server and answers 503 to
// every write until `failing` requests have been refused, as an API server
// that is restarting would.
type flakyServer struct {
	t       *testing.T
	refused atomic.Int64
	failing int64
	proxy   http.Handler
}

func (f *flakyServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && f.refused.Load() < f.failing {
		f.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, err := w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"message":"restarting"}`))
		if err != nil {
			f.t.Errorf("answering 503: %v", err)
		}
		return
	}
	f.proxy.ServeHTTP(w, req)
}

// TestApplyRetriesAServerThatIsRestarting: writes refused with 503 are
// retried with backoff until the server takes them; every object lands.
func TestApplyRetriesAServerThatIsRestarting(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	flaky := &flakyServer{t: t, failing: 6, proxy: adminProxy(t)}
	front := httptest.NewServer(flaky)
	defer front.Close()

	dir := t.TempDir()
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
	if err := os.WriteFile(filepath.Join(dir, "cms.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	server, insecure := front.URL, true
	flags.APIServer, flags.Insecure = &server, &insecure
	events, err := runFiles(context.Background(), flags, []string{dir}, apply.Options{Write: apply.WriteOptions{Namespace: ns}},
		tuning{backoff: wait.Backoff{Steps: 10, Duration: 10 * time.Millisecond, Factor: 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Outcome != apply.Created {
			t.Errorf("%s: %s %v", apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
		}
	}
	if got := flaky.refused.Load(); got != flaky.failing {
		t.Errorf("server refused %d writes, want %d", got, flaky.failing)
	}
}

// TestApplyGivesUpOnAnUnreachableServer: with no server, one clear error
// — kubectl's sentence, naming the host — at once, not one error per
// object and not after the retry bound: a connection refused on the first
// request means a wrong host or port, which waiting does not cure.
func TestApplyGivesUpOnAnUnreachableServer(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	flags := genericclioptions.NewConfigFlags(false)
	server := down.URL
	flags.APIServer = &server
	dir := t.TempDir()
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
	if err := os.WriteFile(filepath.Join(dir, "cms.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	events, err := runFiles(context.Background(), flags, []string{dir}, apply.Options{},
		tuning{backoff: wait.Backoff{Steps: 3, Duration: time.Second, Factor: 2}})
	host := strings.TrimPrefix(server, "http://")
	if err == nil || !strings.Contains(err.Error(), "The connection to the server "+host+" was refused") || len(events) != 0 {
		t.Errorf("events %d, err = %v", len(events), err)
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("gave up after %s: the backoff was waited", took)
	}
}

// adminProxy forwards plain HTTP to the test cluster with its admin
// credentials, so the flaky front needs no TLS of its own.
func adminProxy(t *testing.T) http.Handler {
	t.Helper()
	target, err := url.Parse(cluster.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := rest.TLSConfigFor(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{TLSClientConfig: tlsConfig}
	return proxy
}
