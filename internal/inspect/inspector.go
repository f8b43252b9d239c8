package inspect

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/journal"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/store"
)

// Inspector answers the console's drill-down: it reads one structure's keys on demand (a dims
// tuple's windows, a page of a queue's tasks, a limiter key, a lock), within the budget of the
// Watcher whose Snapshot the console shows, and does the per-task and per-key writes through the
// store's scripts, each only on what the watched entries cover. The tui knows it as its
// Inspector and, when writes are allowed, its KeyActions.
type Inspector struct {
	w   watched
	rdb redis.UniversalClient

	journal *journal.Journal // where bulk actions are recorded (SetJournal); nil: refused
	target  string           // the target they are recorded under
}

// watched is what the drill-down needs of the Watcher (watch.Watcher's accessors): its entries,
// its budget and the server's clock. None of them waits for a Poll under way.
type watched interface {
	Watched() watch.Watched
	KeysPerSecond() int
	Charge(n int)
	// Pace waits until the sweep's budget allows a step of keys, then charges them (work beside
	// the sweep shares its budget).
	Pace(ctx context.Context, keys int) error
	Now() time.Time
	ServerTime(ctx context.Context) (time.Time, error)
}

// New is the drill-down of w: what it reads and writes, on w's Redis and charged to w's sweep.
func New(w *watch.Watcher) *Inspector {
	return &Inspector{w: w, rdb: w.Client()}
}

// errNoQueue refuses a QueueRef no Snapshot made: the drill-down reads and acts only on the
// queues a Snapshot showed.
var errNoQueue = errors.New("inspect: the Snapshot showed no such queue")

// refusal names the command, the key and the user of a reply Redis gave in place of what
// was read (a store.CommandError gets its user; a bare reply the command its NOPERM names, else
// "read", and key); an error that is not a Redis reply (a lost connection, a timeout) is returned
// as it is, for the caller to try again.
func (in *Inspector) refusal(err error, key string) error {
	var ce *store.CommandError
	var re redis.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		if ce.User != "" {
			return err
		}
		named := *ce
		named.User = store.UserOf(in.rdb)
		return &named
	case errors.As(err, &re) && err != redis.Nil:
		cmd := strings.ToUpper(store.Refused(err))
		if cmd == "" || cmd == "KEY" || cmd == "CHANNEL" || cmd == "COMMAND" {
			cmd = "read"
		}
		return &store.CommandError{Command: cmd, Key: key, User: store.UserOf(in.rdb), Err: err}
	}
	return err
}

// keyLevel reports whether a pipeline error is one key's reply (nil or a Redis error reply), so
// the other replies still stand.
func keyLevel(err error) bool {
	var rerr redis.Error
	return err == redis.Nil || errors.As(err, &rerr)
}

// dimsOf maps a family's dim names to a tuple's dims, escaped, as the Snapshot's are.
func dimsOf(names, dims []string) map[string]string {
	m := make(map[string]string, len(names))
	for i, n := range names {
		if i < len(dims) {
			m[n] = format.Escape(dims[i])
		}
	}
	return m
}
