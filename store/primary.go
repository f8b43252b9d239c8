package store

import (
	"context"
	"net"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"
)

// PrimaryTrack follows the node a Sentinel client's new connections reach: the primary the
// Sentinels named when each was dialled. A change is a failover seen. A node the connection then
// refuses as a replica (a Sentinel's stale answer) counts too, until the next connection reaches
// the primary: the dial is where the address is known, and the role check comes after it.
type PrimaryTrack struct {
	mu      sync.Mutex
	addr    string
	changes int
	at      time.Time
}

// Primary is the address new connections reach ("" before the first), how many times it has
// changed, and when it last did.
func (p *PrimaryTrack) Primary() (addr string, changes int, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr, p.changes, p.at
}

// saw notes a connection dialled to addr.
func (p *PrimaryTrack) saw(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if addr == p.addr {
		return
	}
	if p.addr != "" {
		p.changes++
		p.at = time.Now()
	}
	p.addr = addr
}

// dialed wraps a dial to note the node it reached.
func (p *PrimaryTrack) dialed(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := next(ctx, network, addr)
		if err == nil && cn.RemoteAddr() != nil {
			p.saw(cn.RemoteAddr().String())
		}
		return cn, err
	}
}

// tracks holds each Sentinel client's PrimaryTrack, by a weak pointer that does not keep a
// closed client alive; its entry goes when the client does.
var tracks sync.Map // weak.Pointer[redis.Client] -> *PrimaryTrack

// track registers p as c's.
func track(c *redis.Client, p *PrimaryTrack) {
	key := weak.Make(c)
	tracks.Store(key, p)
	runtime.AddCleanup(c, func(k weak.Pointer[redis.Client]) { tracks.Delete(k) }, key)
}

// PrimaryOf is the PrimaryTrack of a client Target.NewClient made for a Sentinel target; nil
// for any other client.
func PrimaryOf(rdb redis.UniversalClient) *PrimaryTrack {
	c, ok := rdb.(*redis.Client)
	if !ok {
		return nil
	}
	v, _ := tracks.Load(weak.Make(c))
	p, _ := v.(*PrimaryTrack)
	return p
}
