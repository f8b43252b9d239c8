package scanner

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Retry is how a one-shot sweep (a snapshot, a repair) rides out faults that pass: a lost
// connection, a restart, LOADING, TRYAGAIN, CLUSTERDOWN, a timeout. Each is retried with backoff,
// resuming where the last page ended, until no page has got through for GiveUp. A permanent
// error (NOPERM, WRONGTYPE on a read, a script error) ends the sweep at once.
type Retry struct {
	// GiveUp is how long faults may last with no page getting through (30 s when zero).
	GiveUp time.Duration
	// Report hears each fault and the wait before the next try, so the caller can show it
	// while it lasts; nil stays silent.
	Report func(err error, wait time.Duration)
}

// DefaultGiveUp is how long a one-shot command waits out a transient fault.
const DefaultGiveUp = 30 * time.Second

// retryBackoff is the first and the longest wait between tries.
const (
	retryFirst = 250 * time.Millisecond
	retryMax   = 4 * time.Second
)

// runRetrying runs the sweep as run does, riding out transient faults as s's Retry says.
func (s *Sweep) runRetrying(ctx context.Context, until time.Time, visit func(Page)) error {
	r := s.retry
	giveUp := r.GiveUp
	if giveUp <= 0 {
		giveUp = DefaultGiveUp
	}
	last := time.Now() // when a page last got through, or the sweep began
	counted := func(p Page) {
		last = time.Now()
		visit(p)
	}
	wait := retryFirst
	for {
		err := s.run(ctx, until, counted)
		if err == nil || ctx.Err() != nil || store.ClassOf(err) != store.ClassTransient || errors.Is(err, ErrMastersChanged) || errors.Is(err, ErrRestarted) {
			return err
		}
		if time.Since(last) >= giveUp {
			return &GaveUpError{After: time.Since(last).Round(time.Second), Err: err}
		}
		if time.Since(last) < wait { // pages got through since the last fault: start the backoff again
			wait = retryFirst
		}
		d := min(wait, max(giveUp-time.Since(last), 0))
		if r.Report != nil {
			r.Report(err, d)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(d):
		}
		wait = min(wait*2, retryMax)
	}
}

// GaveUpError ends a sweep whose faults lasted past its Retry's GiveUp.
type GaveUpError struct {
	After time.Duration // how long no page got through
	Err   error         // the last fault
}

func (e *GaveUpError) Error() string {
	return "gave up after " + e.After.String() + " without a reply: " + e.Err.Error()
}

func (e *GaveUpError) Unwrap() error { return e.Err }

// refusal names the command and key of a Redis reply that ended a read, and the user it ran as,
// so the one line a command ends on says what was refused to whom. Other errors pass unchanged.
func (s *Sweep) refusal(command, key string, err error) error {
	var re redis.Error
	var ce *store.CommandError
	if err == nil || !errors.As(err, &re) || errors.As(err, &ce) {
		return err
	}
	return &store.CommandError{Command: command, Key: key, User: store.UserOf(s.rdb), Err: err}
}

// ErrRestarted says a server restarted during the sweep: the new process places keys by a new
// hash seed, so a SCAN cursor from before means nothing and the sweep must start over.
var ErrRestarted = errors.New("the server restarted during the sweep")

// sameServer checks that the server behind c is the process the sweep began on, by its run_id;
// check false records it instead (a sweep beginning on this master). A server that gives no
// run_id (refused INFO, an imitation of Redis) is taken as the same.
func (s *Sweep) sameServer(ctx context.Context, addr string, c redis.Cmdable, check bool) error {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		if store.ClassOf(err) == store.ClassPermanent {
			return nil
		}
		return err
	}
	id := infoField(info, "run_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	was, known := s.runIDs[addr]
	switch {
	case !check || !known:
		s.runIDs[addr] = id
	case id != "" && was != "" && id != was:
		return ErrRestarted
	}
	return nil
}

// verify checks that the server behind c is still the one the sweep began on, and notes that it
// was, so a master whose sweep is done is not asked again.
func (s *Sweep) verify(ctx context.Context, addr string, c redis.Cmdable) error {
	err := s.sameServer(ctx, addr, c, true)
	s.mu.Lock()
	s.verified[addr] = err == nil
	s.mu.Unlock()
	return err
}

// infoField is the value of field in an INFO reply, or "".
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
