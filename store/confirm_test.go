package store

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// hourTotal sums the hour windows at of dims (tag, 0..n-1), read past any proxy.
func hourTotal(t *testing.T, rdb redis.UniversalClient, tag string, n int, at time.Time) int64 {
	t.Helper()
	f := adRevenue(t)
	var total int64
	for i := range n {
		k, err := f.Key(WindowAt(Hour, at, shanghai), []string{tag, strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		v, err := rdb.Get(t.Context(), k).Int64()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		total += v
	}
	return total
}

// TestCheckRecordsConfirmsLostReplies: every reply of a flush is lost (the proxy cuts each
// connection at its first reply, after Redis may have run what it had received). The records then
// tell exactly which calls Redis applied: those are confirmed with their events, the rest stay
// and the next flush writes them, and Redis ends with every event exactly once.
func TestCheckRecordsConfirmsLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	proxy, rdb := faultyClient(t, srv, -1)
	s := newStore(t, rdb, Options{})
	if err := s.LoadScripts(t.Context()); err != nil {
		t.Fatal(err)
	}
	w := s.NewWriter(WriterOptions{KeysPerCall: 2, Lanes: 2})
	at := s.Now()
	const pairs = 40
	for i := range pairs {
		for range 3 {
			if err := w.Add(adRevenue(t), []string{"lost", strconv.Itoa(i)}, 1, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	proxy.DropReplies(1 << 30)
	res, err := w.Flush(t.Context())
	if err == nil || res.Failed == 0 {
		t.Fatalf("a flush whose every reply is lost: %+v, %v", res, err)
	}
	sent, waiting := w.Held()
	if sent != pairs || waiting != 0 {
		t.Fatalf("held: %d sent, %d waiting; want %d sent", sent, waiting, pairs)
	}
	proxy.DropReplies(-(1 << 30)) // the network is back

	rc := w.CheckRecords(t.Context())
	inRedis := hourTotal(t, direct, "lost", pairs, at)
	if rc.Unknown != 0 || rc.AppliedPairs+rc.NotApplied != pairs || rc.Applied.Events != inRedis {
		t.Fatalf("records: %+v; Redis holds %d events", rc, inRedis)
	}
	t.Logf("records: %d pairs applied, %d not", rc.AppliedPairs, rc.NotApplied)
	if sent, _ := w.Held(); sent != rc.NotApplied {
		t.Fatalf("%d pairs still held as sent; the records left %d unapplied", sent, rc.NotApplied)
	}
	written := rc.Applied.Events + flushUntilDone(t, w)
	if total := hourTotal(t, direct, "lost", pairs, at); total != 3*pairs || written != 3*pairs {
		t.Fatalf("Redis holds %d, writer counted %d; want %d each", total, written, 3*pairs)
	}
}

// TestCheckRecordsOfAStoppedServer: with Redis gone no record can be read, and every call sent
// stays unconfirmed, said as unknown with the reason.
func TestCheckRecordsOfAStoppedServer(t *testing.T) {
	srv := redistest.Start(t)
	proxy, rdb := faultyClient(t, srv, -1)
	s := newStore(t, rdb, Options{})
	if err := s.LoadScripts(t.Context()); err != nil {
		t.Fatal(err)
	}
	w := s.NewWriter(WriterOptions{KeysPerCall: 2, Lanes: 1})
	for i := range 5 {
		if err := w.Add(adRevenue(t), []string{"gone", strconv.Itoa(i)}, 1, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	proxy.DropReplies(1 << 30)
	if _, err := w.Flush(t.Context()); err == nil {
		t.Fatal("a flush whose replies are lost reported no error")
	}
	srv.Stop()
	rc := w.CheckRecords(t.Context())
	if rc.Unknown != 5 || rc.Err == nil || rc.AppliedPairs != 0 {
		t.Fatalf("records of a stopped server: %+v", rc)
	}
}

// TestBlameNamesCommandKeyAndUser: a flush refused for good is named in one line by the command
// Redis refused, the key and the user, from real refusals.
func TestBlameNamesCommandKeyAndUser(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	for _, u := range [][]string{
		{"noeval", "-evalsha", "-eval"},
		{"noload", "-script", "-eval"},
		{"nowrite", "-@write"},
	} {
		args := append([]any{"ACL", "SETUSER", u[0], "on", ">pw", "~*", "+@all"}, toAny(u[1:])...)
		if err := admin.Do(t.Context(), args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	admin.RPush(t.Context(), "{wrong:0}:"+WindowAt(Hour, time.Now(), shanghai).Start.Format("2006010215"), "x")
	for _, c := range []struct {
		user, tag string
		want      string
	}{
		{"noeval", "e", `^EVALSHA on key "\{e:0\}:\d{10}" as user "noeval": NOPERM .*'evalsha'`},
		{"noload", "l", `^SCRIPT LOAD as user "noload": NOPERM .*'script\|load'`},
		{"nowrite", "w", `^EVALSHA on key "\{w:0\}:\d{10}" as user "nowrite": ERR The user executing the script can't run`},
		{"default", "wrong", `^INCRBY on key "\{wrong:0\}:\d{10}" as user "default": key holds the wrong type$`},
	} {
		t.Run(c.user+"/"+c.tag, func(t *testing.T) {
			opt := &redis.Options{Addr: srv.Addr, MaxRetries: -1}
			if c.user != "default" {
				opt.Username, opt.Password = c.user, "pw"
			}
			rdb := redis.NewClient(opt)
			t.Cleanup(func() { _ = rdb.Close() })
			if c.user == "noload" {
				admin.ScriptFlush(t.Context())
			} else if err := New(admin, Options{}).LoadScripts(t.Context()); err != nil {
				t.Fatal(err)
			}
			w := newStore(t, rdb, Options{}).NewWriter(WriterOptions{Lanes: 1})
			if err := w.Add(adRevenue(t), []string{c.tag, "0"}, 1, time.Time{}); err != nil {
				t.Fatal(err)
			}
			_, err := w.Flush(t.Context())
			ce := w.Blame(err, UserOf(rdb))
			if ce == nil || !regexp.MustCompile(c.want).MatchString(ce.Error()) || strings.Contains(ce.Error(), "\n") {
				t.Fatalf("flush error %v\nblamed as %v\nwant %s", err, ce, c.want)
			}
		})
	}
	// A failure that may pass is nobody's to blame.
	gone := redis.NewClient(&redis.Options{Addr: redistest.RefusedAddr(t), MaxRetries: -1})
	t.Cleanup(func() { _ = gone.Close() })
	refused := gone.Ping(t.Context()).Err()
	if !errors.Is(refused, syscall.ECONNREFUSED) { // a dead server's, not another server that took the port
		t.Fatalf("the refused address answered %v", refused)
	}
	w := newStore(t, admin, Options{}).NewWriter(WriterOptions{})
	if ce := w.Blame(refused, "default"); refused == nil || ce != nil {
		t.Fatalf("a refused connection (%v) blamed: %v", refused, ce)
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
