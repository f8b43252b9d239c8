package store

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

func TestParseSentinelTarget(t *testing.T) {
	for _, c := range []struct {
		addr, want string // want: the error's words, or "" for none
		master     string
		sentinels  int
		user, pass string
		db         int
	}{
		{addr: "redis-sentinel://127.0.0.1:26379/mymaster", master: "mymaster", sentinels: 1},
		{addr: "redis-sentinel://app:s3cret@a:26379,b:26380,c:26381/orders/2", master: "orders", sentinels: 3, user: "app", pass: "s3cret", db: 2},
		{addr: "redis-sentinel://:pw@a:26379/m%2Fx", master: "m/x", sentinels: 1, pass: "pw"},
		{addr: "redis-sentinel://127.0.0.1:26379", want: "no master name"},
		{addr: "redis-sentinel://127.0.0.1:26379/", want: "no master name"},
		{addr: "redis-sentinel://a:26379,b/mymaster", want: `Sentinel "b": want host:port`},
		{addr: "redis-sentinel://a:99999/mymaster", want: "not a number from 1 to 65535"},
		{addr: "redis-sentinel://a:26379/mymaster?db=1", want: "no query"},
		{addr: "redis-sentinel://a:26379/mymaster/x", want: `database "x"`},
		{addr: "sentinel://a:26379/mymaster", want: "redis-sentinel://"},
	} {
		t.Run(c.addr, func(t *testing.T) {
			tg, err := ParseTarget([]string{c.addr}, "", "")
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Sentinel == nil || tg.Sentinel.Master != c.master || len(tg.Addrs) != c.sentinels || tg.Mode() != "sentinel" {
				t.Fatalf("target %+v, want master %q with %d Sentinels", tg, c.master, c.sentinels)
			}
			if tg.Username != c.user || tg.Password != c.pass || tg.DB != c.db {
				t.Fatalf("user %q, password %q, db %d; want %q, %q, %d", tg.Username, tg.Password, tg.DB, c.user, c.pass, c.db)
			}
		})
	}
	if _, err := ParseTarget([]string{"redis-sentinel://a:1/m", "b:2"}, "", ""); err == nil || !strings.Contains(err.Error(), "only address") {
		t.Fatalf("a Sentinel URL beside another address: %v", err)
	}
	if _, err := ParseTarget([]string{"redis-sentinel://u:hunter2@a:1/"}, "", ""); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("the error must not show the password: %v", err)
	}
}

// sentinelStore is a store on the primary the Sentinels of s name.
func sentinelStore(t *testing.T, s *redistest.Sentinels) *Store {
	t.Helper()
	tg, err := ParseTarget([]string{"redis-sentinel://" + strings.Join(s.Addrs, ",") + "/" + s.Master}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rdb := tg.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	return newStore(t, rdb, Options{})
}

// TestWriterThroughFailovers writes from many goroutines through a Sentinel target while the
// primary is failed over (SENTINEL FAILOVER), then killed. Every event added is counted once
// on the primary that is left.
func TestWriterThroughFailovers(t *testing.T) {
	s := redistest.StartSentinels(t, 2, 3, "")
	st := sentinelStore(t, s)
	f := adRevenue(t)
	w := st.NewWriter(WriterOptions{KeysPerCall: 6, Lanes: 3, CallsPerPipeline: 7})
	at := st.Now()
	var stop atomic.Bool
	var added, written atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			res, _ := w.Flush(t.Context())
			written.Add(res.Events)
		}
	})
	for g := range 4 {
		wg.Go(func() {
			// Traffic, not a flood: 64 events a millisecond from each goroutine, which the
			// flusher keeps up with.
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for i := 0; !stop.Load(); i++ {
				if err := w.Add(f, []string{"fo", strconv.Itoa((g*7919 + i) % 200)}, 1, at); err != nil {
					t.Error(err)
					return
				}
				added.Add(1)
				if i%64 == 0 {
					<-tick.C
				}
			}
		})
	}
	flowing := func(what string) {
		from := written.Load()
		redistest.Eventually(t, "writes to flow "+what, 30*time.Second, func() bool { return written.Load() > from+1000 })
	}
	flowing("before the failovers")
	moved := s.Failover(t)
	flowing("after SENTINEL FAILOVER to " + moved)
	killed := s.KillPrimary(t)
	flowing("after the primary was killed, to " + killed)
	stop.Store(true)
	wg.Wait()
	written.Add(flushUntilDone(t, w))
	if written.Load() != added.Load() {
		t.Errorf("flushes reported %d events written, want %d", written.Load(), added.Load())
	}
	wantTotals(t, st, "fo", 200, at, added.Load())
	t.Logf("%d events through two failovers", added.Load())
}

// A connection to a node that says it is a replica is refused before any command runs on it,
// as when a Sentinel's answer is stale: the error names the node's role and its primary, and
// passes (a failover is under way).
func TestNoConnectionToAReplica(t *testing.T) {
	s := redistest.StartSentinels(t, 1, 1, "")
	tg, err := ParseTarget([]string{"redis-sentinel://" + s.Addrs[0] + "/" + s.Master}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	replica := s.Nodes[1]
	// A failover client's connections as go-redis makes them, dialled to the replica.
	rdb := redis.NewClient(&redis.Options{Addr: "FailoverClient", MaxRetries: -1,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, replica.Addr)
		},
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return primaryOnly(ctx, cn, tg) }})
	t.Cleanup(func() { _ = rdb.Close() })
	err = rdb.Set(t.Context(), "k", 1, 0).Err()
	if err == nil || !strings.Contains(err.Error(), "is a slave of "+s.Primary(t)) || ClassOf(err) != ClassTransient {
		t.Fatalf("a write through a connection to a replica: %v (%v)", err, ClassOf(err))
	}
	if n, err := replica.Client(t).DBSize(t.Context()).Result(); err != nil || n != 0 {
		t.Fatalf("the replica holds %d keys (%v)", n, err)
	}
	// A connection made while the node was the primary: its READONLY, once it is a replica, is
	// a failover under way, which passes, alone or in a pipeline.
	demoted := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	demoted.AddHook(sentinelHook{t: tg, track: &PrimaryTrack{}})
	t.Cleanup(func() { _ = demoted.Close() })
	err = demoted.Set(t.Context(), "k", 1, 0).Err()
	var fe *FailoverError
	if !errors.As(err, &fe) || ClassOf(err) != ClassTransient || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("a write to a demoted primary: %v (%v)", err, ClassOf(err))
	}
	pipe := demoted.Pipeline()
	incr := pipe.Incr(t.Context(), "k")
	_, _ = pipe.Exec(t.Context())
	if !errors.As(incr.Err(), &fe) || ClassOf(incr.Err()) != ClassTransient {
		t.Fatalf("a pipelined write to a demoted primary: %v", incr.Err())
	}
}

// What the Sentinels' answers come to: the primary they agree on, or one line saying which
// Sentinels disagree, did not answer, do not know the name, or refused our credentials.
func TestPrimaryFrom(t *testing.T) {
	refused := errors.New("dial tcp a:1: connect: connection refused")
	wrongpass := errors.New("WRONGPASS invalid username-password pair or user is disabled.")
	for _, c := range []struct {
		name    string
		answers []SentinelAnswer
		primary string
		says    string
		class   ErrorClass
	}{
		{"all agree", []SentinelAnswer{{Sentinel: "a:1", Primary: "p:1"}, {Sentinel: "b:1", Primary: "p:1"}}, "p:1", "", 0},
		{"one silent, the rest agree", []SentinelAnswer{{Sentinel: "a:1", Err: refused}, {Sentinel: "b:1", Primary: "p:1"}}, "p:1", "", 0},
		{"they disagree", []SentinelAnswer{{Sentinel: "a:1", Primary: "p:1"}, {Sentinel: "b:1", Primary: "p:2"}, {Sentinel: "c:1", Primary: "p:1"}},
			"", `the Sentinels disagree on the primary of "m": a:1, c:1 name p:1; b:1 name p:2`, ClassTransient},
		{"none answers", []SentinelAnswer{{Sentinel: "a:1", Err: refused}, {Sentinel: "b:1", Err: context.DeadlineExceeded}},
			"", "no Sentinel answers: a:1: connect: connection refused; b:1: context deadline exceeded", ClassTransient},
		{"none knows the name", []SentinelAnswer{{Sentinel: "a:1"}, {Sentinel: "b:1", Err: refused}},
			"", `no Sentinel knows the master name "m" (asked a:1)`, ClassTransient},
		{"credentials refused", []SentinelAnswer{{Sentinel: "a:1", Primary: "p:1"}, {Sentinel: "b:1", Err: wrongpass}},
			"", "Sentinel b:1 refused our credentials: WRONGPASS invalid", ClassPermanent},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PrimaryFrom("m", c.answers)
			if c.says == "" {
				if err != nil || p != c.primary {
					t.Fatalf("primary %q, %v; want %q", p, err, c.primary)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.says) || ClassOf(err) != c.class {
				t.Fatalf("%q, %v (%v); want an error saying %q, %v", p, err, ClassOf(err), c.says, c.class)
			}
		})
	}
}
