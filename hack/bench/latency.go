package main

import (
	"errors"
	"net"
	"net/url"
	"sync"
	"time"
)

// latencyProxy forwards TCP connections to a server, each chunk delivered
// a fixed delay after it was read, in both directions: a round trip gains
// twice the delay, as a remote cluster's would, without limiting how much
// is in flight (HTTP/2 multiplexes every request on one connection). The
// bytes (TLS included) pass untouched, so kubeconfig credentials still
// work. No library does this at the TCP level; it is the benchmark's only.
type latencyProxy struct {
	listener net.Listener
	target   string
	delay    time.Duration
	wg       sync.WaitGroup
}

// startLatencyProxy proxies to the host of serverURL; URL is its address.
func startLatencyProxy(serverURL string, delay time.Duration) (*latencyProxy, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{listener: l, target: u.Host, delay: delay}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// URL is the proxy's https address.
func (p *latencyProxy) URL() string { return "https://" + p.listener.Addr().String() }

func (p *latencyProxy) Close() error {
	err := p.listener.Close()
	p.wg.Wait()
	return err
}

func (p *latencyProxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			closeQuietly(client)
			continue
		}
		go p.pipe(client, server)
		go p.pipe(server, client)
	}
}

// chunk is bytes read and when they may be written.
type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies from src to dst, each chunk p.delay after it was read.
func (p *latencyProxy) pipe(src, dst net.Conn) {
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{data: buf[:n], due: time.Now().Add(p.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	// Either side gone: the connection is over both ways.
	closeQuietly(src)
	closeQuietly(dst)
	for range chunks {
	}
}

// closeQuietly closes a connection the benchmark is done with; the other
// direction may have closed it already.
func closeQuietly(c net.Conn) {
	if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return
	}
}
