package redistest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a loopback TCP proxy in front of a Redis that can lose replies: with DropReplies(n),
// the next n times Redis answers, the answer is thrown away and the client's connection cut, as
// when a network fails after Redis ran a command and before its reply arrived.
type Proxy struct {
	Addr    string
	backend string
	l       net.Listener
	drops   atomic.Int64
	dropped atomic.Int64

	mu    sync.Mutex
	conns []net.Conn
}

// StartProxy listens on a free loopback port and forwards to backend until the test ends.
func StartProxy(t testing.TB, backend string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: proxy listen: %v", err)
	}
	p := &Proxy{Addr: l.Addr().String(), backend: backend, l: l}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// DropReplies makes the proxy lose the next n replies.
func (p *Proxy) DropReplies(n int) { p.drops.Add(int64(n)) }

// Dropped returns how many replies the proxy has lost.
func (p *Proxy) Dropped() int { return int(p.dropped.Load()) }

func (p *Proxy) accept() {
	for {
		client, err := p.l.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.backend)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(server, client); server.Close() }()
		go p.replies(server, client)
	}
}

// replies copies Redis's answers to the client, losing one (and the connection) when asked to.
func (p *Proxy) replies(server, client net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if p.takeDrop() {
				p.dropped.Add(1)
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Close stops the proxy and cuts every connection through it.
func (p *Proxy) Close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// takeDrop uses up one of the replies to lose, if any are left.
func (p *Proxy) takeDrop() bool {
	for {
		n := p.drops.Load()
		if n <= 0 {
			return false
		}
		if p.drops.CompareAndSwap(n, n-1) {
			return true
		}
	}
}
