package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestLatencyProxyDelaysEachRequestNotTheirSum: 40 requests at once on
// one HTTP/2 connection through the proxy each take about one round trip
// (twice the delay), all of them together too: the proxy delays each
// chunk from when it was read, so streams of one connection do not wait
// for each other's delay (serialised, they would take 40 round trips).
// The bodies pass intact, 1 MiB ones included.
func TestLatencyProxyDelaysEachRequestNotTheirSum(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	var (
		mu      sync.Mutex
		remotes = map[string]bool{}
	)
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
		if r.URL.Path == "/big" {
			_, _ = w.Write(big)
			return
		}
		_, _ = io.WriteString(w, r.URL.Path)
	}))
	server.EnableHTTP2 = true
	server.StartTLS()
	defer server.Close()
	const delay = 100 * time.Millisecond
	proxy, err := startLatencyProxy(server.URL, delay)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	client := server.Client()

	get := func(path string) []byte {
		resp, err := client.Get(proxy.URL() + path)
		if err != nil {
			t.Error(err)
			return nil
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Errorf("protocol %s, want HTTP/2", resp.Proto)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Error(err)
		}
		return body
	}
	start := time.Now()
	if got := get("/big"); !bytes.Equal(got, big) {
		t.Fatalf("the 1 MiB body came through as %d different bytes", len(got))
	}
	if took := time.Since(start); took < 2*delay {
		t.Fatalf("the first request took %s, less than a round trip of %s", took, 2*delay)
	}

	const requests = 40
	start = time.Now()
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			path := "/" + string(rune('a'+i%26))
			if got := string(get(path)); got != path {
				t.Errorf("got %q for %s", got, path)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d concurrent requests through a %s delay: %s", requests, delay, took)
	if took < 2*delay || took > 8*delay {
		t.Errorf("%d concurrent requests took %s: want about one round trip of %s, not %s", requests, took, 2*delay, requests*2*delay)
	}
	if len(remotes) != 1 {
		t.Errorf("the requests came on %d connections, want one multiplexed connection", len(remotes))
	}
}
