package jobs

// A bulk action through a passing fault: a lost connection, a restart, LOADING, TRYAGAIN, a
// timeout. The reads before a chunk are only reads, and every chunk's script acts only on the
// tasks still where their page showed them, so both are safe to do again once the fault has
// passed: if a send whose reply was lost ran, the script sent again finds its tasks gone and
// writes nothing (they are counted gone, the one way the figures can be off: BulkResult.Resent
// says how many chunks were sent again); if it did not run, the second does what it would have.
// What undoes a chunk was recorded before its first send either way.

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// bulkRetry is the first and the longest wait before a step is done again, and how long faults
// may last with no reply before the run ends with the last one.
const (
	bulkRetryFirst = 250 * time.Millisecond
	bulkRetryMax   = 4 * time.Second
	bulkGiveUp     = 30 * time.Second
)

// faults is a run's passing faults: since when they have lasted, and the next wait.
type faults struct {
	since time.Time // zero when the last step answered
	wait  time.Duration
}

// ride says whether to do a step again after err: a passing fault that has lasted less than
// bulkGiveUp, waited out with backoff while res.Fault says it (told to opt.Progress). False for
// nil, a permanent error, one past the give-up, or when ctx ends while it waits.
func (f *faults) ride(ctx context.Context, err error, again string, opt BulkOptions, res *BulkResult) bool {
	if f == nil || err == nil || ctx.Err() != nil || !passing(err) {
		return false
	}
	if f.since.IsZero() {
		f.since, f.wait = time.Now(), bulkRetryFirst
	}
	if time.Since(f.since) >= bulkGiveUp {
		return false
	}
	res.Fault = store.Reply(err).Error() + "; " + again + " in " + f.wait.String()
	if opt.Progress != nil {
		opt.Progress(*res)
	}
	ok := store.Sleep(ctx, f.wait) == nil
	f.wait = min(f.wait*2, bulkRetryMax)
	return ok
}

// passing says whether err is Redis' passing fault: a lost, refused or timed-out connection, a
// full pool, or a reply of a server loading, resharding or busy (ClassOf's transient replies).
// Any other error (the journal full, a permanent reply, a context ended) is not waited out.
func passing(err error) bool {
	var ne net.Error
	if transient, reply := store.TransientReply(err); reply {
		return transient
	}
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// passed notes that a step answered: the next fault starts its wait afresh.
func (f *faults) passed(res *BulkResult) {
	f.since, res.Fault = time.Time{}, ""
}

// callChunk runs a chunk's script, sending it again through passing faults (opt's run's faults,
// ride). It returns the script's flags, the round trip of the send that answered and whether it
// was sent again.
func callChunk(ctx context.Context, rdb redis.UniversalClient, script *redis.Script, keys []string, args []any, opt BulkOptions, res *BulkResult) (flags []int64, rtt time.Duration, resent bool, err error) {
	f := opt.faults
	if f == nil {
		f = &faults{}
	}
	for {
		began := time.Now()
		flags, err = script.Run(context.WithoutCancel(ctx), rdb, keys, args...).Int64Slice()
		if err == nil {
			rtt = time.Since(began)
			break
		}
		if !f.ride(ctx, err, "sending the chunk again", opt, res) {
			return nil, 0, resent, err
		}
		resent = true
	}
	f.passed(res)
	res.Chunks++
	if resent {
		res.Resent++
	}
	return flags, rtt, resent, nil
}
