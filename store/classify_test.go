package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// Each class from the reply a real redis-server gives, not from imitated texts.
func TestClassOfRealReplies(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+get", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	reader := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "pw"})
	t.Cleanup(func() { _ = reader.Close() })
	admin.RPush(ctx, "alist", "x")
	noperm := reader.Set(ctx, "k", "1", 0).Err()
	wrongType := admin.Incr(ctx, "alist").Err()
	noScript := admin.EvalSha(ctx, strings.Repeat("0", 40), nil).Err()
	unknown := admin.Do(ctx, "NOSUCHCOMMAND").Err()
	wrongPass := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "bad"})
	t.Cleanup(func() { _ = wrongPass.Close() })
	badLogin := wrongPass.Ping(ctx).Err()
	admin.ConfigSet(ctx, "maxmemory", "1")
	oom := admin.Set(ctx, "big", "v", 0).Err()
	admin.ConfigSet(ctx, "maxmemory", "0")

	_, port, _ := strings.Cut(srv.Addr, ":")
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", port).Client(t)
	readOnly := replica.Set(ctx, "k", "1", 0).Err()

	gone := redis.NewClient(&redis.Options{Addr: redistest.RefusedAddr(t), MaxRetries: -1})
	t.Cleanup(func() { _ = gone.Close() })
	refused := gone.Ping(ctx).Err()
	if !errors.Is(refused, syscall.ECONNREFUSED) { // a dead server's, not another server that took the port
		t.Fatalf("the refused address answered %v", refused)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	canceled := admin.Ping(cancelled).Err()

	slow := redistest.StartFaultProxy(t, srv.Addr)
	slow.SetDelay(500 * time.Millisecond)
	timing := redis.NewClient(&redis.Options{Addr: slow.Addr, ReadTimeout: 20 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = timing.Close() })
	var timeout error
	for i := 0; i < 20 && timeout == nil; i++ {
		timeout = timing.Ping(ctx).Err()
	}

	cases := []struct {
		name string
		err  error
		want ErrorClass
	}{
		{"NOPERM", noperm, ClassPermanent},
		{"WRONGTYPE", wrongType, ClassPermanent},
		{"NOSCRIPT", noScript, ClassPermanent},
		{"unknown command", unknown, ClassPermanent},
		{"WRONGPASS", badLogin, ClassPermanent},
		{"OOM", oom, ClassPermanent},
		{"READONLY", readOnly, ClassPermanent},
		{"connection refused", refused, ClassTransient},
		{"read timeout", timeout, ClassTransient},
		{"cancelled", canceled, ClassCanceled},
		{"wrapped NOPERM", fmt.Errorf("flush: %w", errors.Join(errors.New("x"), noperm)), ClassPermanent},
		{"NOPERM as a key error", &KeyError{Key: "k", Err: noperm}, ClassPermanent},
		{"integer check", &KeyError{Key: "k", Err: ErrNotInteger}, ClassPermanent},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: the server gave no error", c.name)
			continue
		}
		if got := ClassOf(c.err); got != c.want {
			t.Errorf("%s: ClassOf(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if got := Refused(noperm); got != "set" {
		t.Errorf("Refused(%v) = %q, want set", noperm, got)
	}
	if got := Refused(wrongType); got != "" {
		t.Errorf("Refused(WRONGTYPE) = %q, want empty", got)
	}
}

// The passing states Redis and Redis Cluster answer with are transient whatever wraps them.
func TestClassOfPassingStates(t *testing.T) {
	for _, msg := range []string{
		"LOADING Redis is loading the dataset in memory",
		"TRYAGAIN Multiple keys request during rehashing of slot",
		"CLUSTERDOWN The cluster is down",
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
		"BUSY Redis is busy running a script.",
		"ERR max number of clients reached",
	} {
		for _, err := range []error{redisReply(msg), fmt.Errorf("sweep: %w", redisReply(msg))} {
			if got := ClassOf(err); got != ClassTransient {
				t.Errorf("ClassOf(%v) = %v, want transient", err, got)
			}
		}
	}
	for _, msg := range []string{"CROSSSLOT Keys in request don't hash to the same slot"} {
		if got := ClassOf(fmt.Errorf("flush: %w", errors.New(msg))); got != ClassPermanent {
			t.Errorf("ClassOf(%q) = %v, want permanent", msg, got)
		}
	}
}

// redisReply is an error of the type go-redis returns for a reply, read from a real one's text.
type redisReply string

func (r redisReply) Error() string { return string(r) }
func (redisReply) RedisError()     {}

func TestCommandErrorLine(t *testing.T) {
	err := &CommandError{Command: "EVALSHA incr_windows", Key: "flow:{a}:2026112310", User: "writer",
		Err: &KeyError{Key: "flow:{a}:2026112310", Err: redisReply("NOPERM User writer has no permissions to run the 'evalsha' command")}}
	want := `EVALSHA incr_windows on key "flow:{a}:2026112310" as user "writer": NOPERM User writer has no permissions to run the 'evalsha' command`
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err.Error(), want)
	}
	if !Permanent(err) || Refused(err) != "evalsha" {
		t.Errorf("Permanent=%v Refused=%q", Permanent(err), Refused(err))
	}
}

// UserOf names the user a client logs in as ("default" without one), and Reply gives the cause
// as Redis said it, without the wrapping of the operation that met it.
func TestUserOfAndReply(t *testing.T) {
	srv := redistest.Start(t)
	if got := UserOf(srv.Client(t)); got != "default" {
		t.Errorf("no username: %q", got)
	}
	named := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "ops"})
	t.Cleanup(func() { _ = named.Close() })
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}, Username: "ops"})
	t.Cleanup(func() { _ = cluster.Close() })
	if UserOf(named) != "ops" || UserOf(cluster) != "ops" {
		t.Errorf("named users: %q, %q", UserOf(named), UserOf(cluster))
	}
	reply := srv.Client(t).EvalSha(t.Context(), strings.Repeat("0", 40), nil).Err()
	if got := Reply(fmt.Errorf("store: flush: %w", reply)); got == nil || got.Error() != reply.Error() {
		t.Errorf("Reply of a wrapped NOSCRIPT: %v", got)
	}
	plain := errors.New("dial tcp: connection refused")
	if Reply(plain) != plain {
		t.Errorf("Reply of an error with no reply in it: %v", Reply(plain))
	}
}
