package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FaultProxy is a loopback TCP proxy in front of a Redis that forwards whole RESP frames and can
// lose replies the way a network does: Redis has run the command, and the connection drops
// before its answer arrives. Faults are asked for with DropReplies, SetCutRate and Arm.
type FaultProxy struct {
	Addr string

	l     net.Listener
	drops atomic.Int64  // replies still to lose
	rate  atomic.Uint64 // share of array and bulk replies to lose, per million
	rnd   atomic.Uint64
	cuts  atomic.Int64
	delay atomic.Int64 // the longest random delay of a reply, in ns; 0 for none
	held  atomic.Int64 // replies being held back by the delay now

	mu       sync.Mutex
	armed    bool
	before   func(i int)
	cutAfter int
	conns    []net.Conn
}

// StartFaultProxy listens on a free loopback port and forwards to backend until the test ends.
func StartFaultProxy(t testing.TB, backend string) *FaultProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: proxy listen: %v", err)
	}
	p := &FaultProxy{Addr: l.Addr().String(), l: l}
	go p.accept(backend)
	t.Cleanup(p.close)
	return p
}

// DropReplies makes the proxy lose the next n replies, cutting the connection each carried.
func (p *FaultProxy) DropReplies(n int) { p.drops.Add(int64(n)) }

// SetCutRate makes the proxy lose, at random, that many array or bulk replies per million.
func (p *FaultProxy) SetCutRate(perMillion uint64) { p.rate.Store(perMillion) }

// Arm sets a plan for the next connection that sends an EVALSHA. Before forwarding its i-th EVALSHA
// (from 0), the proxy waits for every earlier reply and calls before(i). So a test can change the
// server between two calls of one pipeline. After passing cutAfter replies on, it cuts the
// connection (0: never).
func (p *FaultProxy) Arm(before func(i int), cutAfter int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.before, p.cutAfter = true, before, cutAfter
}

// SetDelay makes the proxy hold each reply for a random time below max, as a congested network
// does (replies of one connection stay in order).
func (p *FaultProxy) SetDelay(max time.Duration) { p.delay.Store(int64(max)) }

// Held returns how many replies the proxy is holding back at this moment (SetDelay): each is a
// call whose answer Redis has given and the client is still waiting for.
func (p *FaultProxy) Held() int { return int(p.held.Load()) }

// Cuts returns how many replies the proxy has lost.
func (p *FaultProxy) Cuts() int { return int(p.cuts.Load()) }

func (p *FaultProxy) accept(backend string) {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", backend)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go p.serve(c, s)
	}
}

// link is one client connection's state: frames sent and answered, and its armed plan if any.
type link struct {
	mu       sync.Mutex
	cond     *sync.Cond
	sent     int
	answered int
	armed    bool
	base     int // answered count when the plan started
	before   func(i int)
	cutAfter int
}

func (p *FaultProxy) serve(c, s net.Conn) {
	defer s.Close()
	ln := &link{}
	ln.cond = sync.NewCond(&ln.mu)
	go p.replies(c, s, ln)
	r := bufio.NewReader(c)
	evals := 0
	for {
		f, err := readFrame(r)
		if err != nil {
			return
		}
		isEval := bytes.Contains(bytes.ToLower(f[:min(len(f), 40)]), []byte("evalsha"))
		ln.mu.Lock()
		if isEval && !ln.armed {
			p.mu.Lock()
			if p.armed {
				ln.armed, ln.base, ln.before, ln.cutAfter = true, ln.sent, p.before, p.cutAfter
				p.armed = false
			}
			p.mu.Unlock()
		}
		if ln.armed && isEval {
			for ln.answered < ln.sent {
				ln.cond.Wait()
			}
			ln.mu.Unlock()
			if ln.before != nil {
				ln.before(evals)
			}
			evals++
			ln.mu.Lock()
		}
		ln.sent++
		ln.mu.Unlock()
		if _, err := s.Write(f); err != nil {
			return
		}
	}
}

// replies copies the server's frames to the client, losing one (and the connection) when a fault
// says so.
func (p *FaultProxy) replies(c, s net.Conn, ln *link) {
	defer c.Close()
	defer s.Close()
	r := bufio.NewReader(s)
	for {
		f, err := readFrame(r)
		if err != nil {
			return
		}
		ln.mu.Lock()
		ln.answered++
		cut := ln.armed && ln.cutAfter > 0 && ln.answered-ln.base > ln.cutAfter
		ln.cond.Broadcast()
		ln.mu.Unlock()
		cut = cut || p.takeDrop() || p.randomCut(f)
		if cut {
			p.cuts.Add(1)
			return
		}
		if d := p.delay.Load(); d > 0 {
			p.held.Add(1)
			time.Sleep(time.Duration(p.draw() % uint64(d))) // the delay itself
			p.held.Add(-1)
		}
		if _, err := c.Write(f); err != nil {
			return
		}
	}
}

// takeDrop uses up one of the replies to lose, if any are left.
func (p *FaultProxy) takeDrop() bool {
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

// randomCut draws whether to lose an array or bulk reply at the configured rate (splitmix64).
func (p *FaultProxy) randomCut(f []byte) bool {
	rate := p.rate.Load()
	if rate == 0 || len(f) == 0 || (f[0] != '*' && f[0] != '$') {
		return false
	}
	return p.draw()%1_000_000 < rate
}

// draw returns the next pseudo-random number (splitmix64).
func (p *FaultProxy) draw() uint64 {
	x := p.rnd.Add(0x9E3779B97F4A7C15)
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	return x
}

func (p *FaultProxy) close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// readFrame reads one complete RESP2 or RESP3 frame and returns its raw bytes.
func readFrame(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if err := readFrameInto(r, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func readFrameInto(r *bufio.Reader, buf *bytes.Buffer) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	buf.Write(line)
	if len(line) < 3 {
		return fmt.Errorf("resp: short line %q", line)
	}
	n, _ := strconv.Atoi(string(bytes.TrimRight(line[1:], "\r\n")))
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '!', '=': // bulk: n bytes and CRLF
		if n < 0 {
			return nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		buf.Write(b)
		return nil
	case '*', '~', '>': // n frames
		return readFrames(r, buf, n)
	case '%': // n key-value pairs
		return readFrames(r, buf, 2*n)
	case '|': // attributes, then the reply itself
		if err := readFrames(r, buf, 2*n); err != nil {
			return err
		}
		return readFrameInto(r, buf)
	}
	return fmt.Errorf("resp: unknown type %q", line[0])
}

func readFrames(r *bufio.Reader, buf *bytes.Buffer, n int) error {
	for range max(n, 0) {
		if err := readFrameInto(r, buf); err != nil {
			return err
		}
	}
	return nil
}
