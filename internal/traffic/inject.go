package traffic

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// InjectOptions say what Inject writes.
type InjectOptions struct {
	Events   int64         // stop after this many events (0: no limit)
	Duration time.Duration // stop after this long (0: no limit)
	Rate     float64       // events per second (0: as fast as possible)
	Dims     int           // distinct dims tuples
	// GiveUp is how long a failing Redis is retried, counted from the start of the first flush
	// that failed, before inject reports what it could not write (GiveUp, 30 s, when zero).
	GiveUp time.Duration
}

// InjectResult is what Inject wrote, and what it could not.
type InjectResult struct {
	Events     int64 // events written: confirmed by Redis's answer or by their sequence record
	Keys       int64 // key updates written (an hour and a day key are two)
	Increments int64 // script calls written, each adding to many keys
	Elapsed    time.Duration
	Refused    int64 // key updates Redis refused (wrong type, not an integer)
	RefusedErr error // the first refusal

	// When inject gives up, the key pairs it still held are one of three:
	ConfirmedByRecord int // answer lost, but their sequence record shows them written (in Events)
	NotConfirmed      int // answer lost, and their record could not be read: written or not
	NotWritten        int // never sent, or shown by their record not applied

	SendErr error  // the last error from Redis or the network
	Err     error  // the permanent error that ended inject (a *store.CommandError), if one did
	GaveUp  string // why inject stopped retrying, when it did
}

// Summary is inject's one line: what it wrote into family, how fast, and what it could not.
func (r InjectResult) Summary(family string) string {
	secs := r.Elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	s := fmt.Sprintf("inject %s: events=%d increments=%d keys=%d seconds=%.2f events/s=%.0f increments/s=%.0f",
		family, r.Events, r.Increments, r.Keys, secs, float64(r.Events)/secs, float64(r.Increments)/secs)
	if r.Refused > 0 {
		s += fmt.Sprintf(" refused=%d", r.Refused)
	}
	if r.GaveUp != "" {
		s += fmt.Sprintf(" not_written_pairs=%d not_confirmed_pairs=%d confirmed_by_record_pairs=%d",
			r.NotWritten, r.NotConfirmed, r.ConfirmedByRecord)
	}
	return s
}

// Problem is the one line that says what went wrong, or nil when everything generated was written.
// It is the permanent error Redis gave (command, key, user), or the pairs inject gave up on. Those
// are said as they are: not written, or not confirmed when their answer never came.
func (r InjectResult) Problem() error {
	var held []string
	if r.NotWritten > 0 {
		held = append(held, fmt.Sprintf("%d key pairs not written", r.NotWritten))
	}
	if r.NotConfirmed > 0 {
		held = append(held, fmt.Sprintf("%d key pairs not confirmed (no answer came and their sequence record could not be read: each is in Redis once or not at all)", r.NotConfirmed))
	}
	if r.ConfirmedByRecord > 0 {
		held = append(held, fmt.Sprintf("%d key pairs confirmed by their sequence record after their answer was lost", r.ConfirmedByRecord))
	}
	what := strings.Join(held, ", ")
	switch {
	case r.Err != nil && r.Refused > 0:
		return fmt.Errorf("%w (Redis refused %d key updates; the others were written)", r.Err, r.Refused)
	case r.Err != nil && what != "":
		return fmt.Errorf("%w; %s", r.Err, what)
	case r.Err != nil:
		return r.Err
	case r.GaveUp != "":
		return fmt.Errorf("%s: %s; last error: %v", r.GaveUp, what, r.SendErr)
	case r.Refused > 0:
		return fmt.Errorf("Redis refused %d key updates (first: %v)", r.Refused, r.RefusedErr)
	}
	return nil
}

// How long a failing Redis is retried before inject reports what it could not write: from the
// first failure, and once the operator has asked to stop. Both include the reading of the
// sequence records (recordCheck). They are kept whatever the client's own timeouts: a flush or a
// read of the records still waiting at its deadline is left to end by itself, and what it held is
// said to be not confirmed.
const (
	giveUp, giveUpStopping = 30 * time.Second, 900 * time.Millisecond
	recordCheck            = 300 * time.Millisecond
)

// Inject generates events on one goroutine and flushes on another, so Redis works while the next
// events are drawn. It stops at the event or time limit or when ctx ends, then flushes what is
// left. A failing Redis is retried with backoff until GiveUp has passed since the first failure;
// a permanent error (a refusal, a missing right, a read-only or full server) ends it at once.
// Either way it stops generating, asks the sequence records about the calls whose answer never
// came, and reports what it could not write.
func Inject(ctx context.Context, st *store.Store, f *store.Family, opt InjectOptions) InjectResult {
	start := time.Now()
	gen, err := NewGeneratorContext(ctx, f, opt.Dims, 1)
	if err != nil {
		return InjectResult{Elapsed: time.Since(start)} // ctx ended while the tuples were drawn
	}
	if opt.GiveUp <= 0 {
		opt.GiveUp = giveUp
	}
	w := st.NewWriter(store.WriterOptions{})
	genDone := make(chan struct{})
	// The generator stops at ctx's end, or when the flusher gives up. Flushes outlive ctx by up
	// to giveUpStopping, so ctrl+c stops generating but what was generated is still written,
	// unless Redis cannot take it by then.
	flushCtx, stopFlushing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFlushing()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(giveUpStopping-recordCheck, stopFlushing)
		context.AfterFunc(flushCtx, func() { t.Stop() })
	})
	defer stop()
	ctx, stopGen := context.WithCancel(ctx)
	defer stopGen()

	go func() {
		defer close(genDone)
		generate(ctx, w, f, gen, opt, start)
	}()
	fl := flusher{ctx: flushCtx, w: w, genDone: genDone, stopGen: stopGen, giveUp: opt.GiveUp, user: store.UserOf(st.Client()), left: -1}
	res := fl.run()
	res.Elapsed = time.Since(start)
	return res
}

// MaxRate is the highest --rate inject takes, in events a second: a hundred times what one
// inject draws on a fast machine, so any rate below it is a real ceiling.
const MaxRate = 100_000_000

// genRound is the most events the generator draws at once before it looks at the clock, the
// writer's backlog and ctx again.
const genRound = 4096

// generate adds gen's events to w at opt's rate, counted from start, until opt's event or time
// limit or ctx's end. It holds back while more than maxPending key pairs wait for Redis.
func generate(ctx context.Context, w *store.Writer, f *store.Family, gen *Generator, opt InjectOptions, start time.Time) {
	rate := opt.Rate
	if !(rate > 0) || math.IsInf(rate, 1) {
		rate = 0 // as fast as Redis takes them
	}
	var generated int64
	deadline := time.Time{}
	if opt.Duration > 0 {
		deadline = start.Add(opt.Duration)
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		if ctx.Err() != nil || (!deadline.IsZero() && !now.Before(deadline)) {
			return
		}
		n, behind := int64(genRound), true
		if rate > 0 {
			// In floating point: a rate of 1e300 owes more events than an int64 holds.
			owed := rate*now.Sub(start).Seconds() - float64(generated)
			n, behind = int64(max(min(owed, genRound), 0)), owed > genRound
		}
		if opt.Events > 0 {
			n = min(n, opt.Events-generated)
		}
		for w.Pending() >= maxPending && ctx.Err() == nil {
			time.Sleep(time.Millisecond) // Redis is behind: hold back rather than pile up
		}
		for range n {
			if err := w.Add(f, gen.Next(), 1, time.Time{}); err != nil {
				return // dims always fit; only a clock far off could expire "now"
			}
		}
		if generated += n; opt.Events > 0 && generated >= opt.Events {
			return
		}
		if !behind {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}
}
