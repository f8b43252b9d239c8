package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Longest is the longest single call a case made, and how it was known.
type Longest struct {
	Us      *float64 // nil when not known
	Command string   // the command it was, as INFO commandstats names it
	From    string   // how it was taken, or why it is not known
	// Calls and Over count the case's calls SLOWLOG logged, and those over the sweep's goal
	// (goalSweepLongestUs); nil unless every call was logged.
	Calls, Over *int64
}

// slowlogWatch collects, by command, the longest call SLOWLOG logged, the calls, and those over
// the sweep's goal, while a case runs. A script's own commands (logged with the client "?:0")
// count toward the longest only: they are inside their script's call.
type slowlogWatch struct {
	mu      sync.Mutex
	longest map[string]time.Duration
	calls   map[string]int64
	over    map[string]int64
}

func newSlowlogWatch() *slowlogWatch {
	return &slowlogWatch{longest: map[string]time.Duration{}, calls: map[string]int64{}, over: map[string]int64{}}
}

func (w *slowlogWatch) add(entries []redis.SlowLog) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range entries {
		args := make([]any, len(e.Args))
		for i, a := range e.Args {
			args[i] = a
		}
		name := store.CommandStatName(args)
		if e.Duration > w.longest[name] {
			w.longest[name] = e.Duration
		}
		if e.ClientAddr == "?:0" {
			continue
		}
		w.calls[name]++
		if e.Duration > goalSweepLongestUs*time.Microsecond {
			w.over[name]++
		}
	}
}

// of is the longest call among names; every says every call was logged, so that the counts
// mean something.
func (w *slowlogWatch) of(names map[string]int64, from string, every bool) Longest {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := Longest{From: from}
	var best time.Duration = -1
	var calls, over int64
	for name, n := range names {
		if n <= 0 {
			continue
		}
		calls, over = calls+w.calls[name], over+w.over[name]
		if d, ok := w.longest[name]; ok && d > best {
			best, l.Command = d, name
		}
	}
	if best >= 0 {
		us := float64(best.Microseconds())
		l.Us = &us
	}
	if every {
		l.Calls, l.Over = &calls, &over
	}
	return l
}

// configInt reads one integer setting with CONFIG GET.
func configInt(ctx context.Context, rdb *redis.Client, name string) (int64, error) {
	m, err := rdb.ConfigGet(ctx, name).Result()
	if err != nil {
		return 0, err
	}
	v, ok := m[name]
	if !ok {
		return 0, fmt.Errorf("CONFIG GET %s: no such setting", name)
	}
	return strconv.ParseInt(v, 10, 64)
}

// slowlogEvery runs pass on bench's own server with SLOWLOG logging every call
// (slowlog-log-slower-than 0), drained every 100 ms by SLOWLOG GET and RESET in one MULTI, so
// that no call is lost whatever the log's length, and the settings put back afterwards. It
// returns the longest call among the commands the pass sent.
func (b *bencher) slowlogEvery(pass func() error) (Longest, error) {
	rdb := b.meter.stats
	threshold, err := configInt(b.ctx, rdb, "slowlog-log-slower-than")
	if err != nil {
		return Longest{From: "CONFIG GET slowlog-log-slower-than: " + err.Error()}, nil
	}
	maxLen, err := configInt(b.ctx, rdb, "slowlog-max-len")
	if err != nil {
		return Longest{From: "CONFIG GET slowlog-max-len: " + err.Error()}, nil
	}
	defer func() { // put the settings back, also after ctrl+c
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), 5*time.Second)
		defer cancel()
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", strconv.FormatInt(threshold, 10))
		rdb.ConfigSet(ctx, "slowlog-max-len", strconv.FormatInt(maxLen, 10))
	}()
	for _, kv := range [][2]string{{"slowlog-max-len", "1000000"}, {"slowlog-log-slower-than", "0"}} {
		if err := rdb.ConfigSet(b.ctx, kv[0], kv[1]).Err(); err != nil {
			return Longest{}, err
		}
	}
	w := newSlowlogWatch()
	drain := func(ctx context.Context) error {
		var get *redis.SlowLogCmd
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			get = p.SlowLogGet(ctx, -1)
			p.SlowLogReset(ctx)
			return nil
		})
		if err == nil {
			w.add(get.Val())
		}
		return err
	}
	if err := drain(b.ctx); err != nil { // what was logged before the pass is not its own
		return Longest{}, err
	}
	w = newSlowlogWatch()
	sent0 := b.meter.sent.snapshot()
	stop, drained := make(chan struct{}), make(chan error, 1)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				drained <- drain(b.ctx)
				return
			case <-t.C:
				if err := drain(b.ctx); err != nil {
					drained <- err
					return
				}
			}
		}
	}()
	err = pass()
	close(stop)
	if derr := <-drained; err == nil && derr != nil {
		err = fmt.Errorf("SLOWLOG: %w", derr)
	}
	sent := b.meter.sent.snapshot()
	for name, n := range sent0 {
		sent[name] -= n
	}
	return w.of(sent, "SLOWLOG, every call logged", true), err
}

// slowlogGiven reads, on a given server, the SLOWLOG entries that pass added, when the
// operator's settings already log: bench leaves a given server's settings alone, so only calls
// over its slowlog-log-slower-than are seen, and entries its slowlog-max-len drops are lost.
func (b *bencher) slowlogGiven(pass func() error) (Longest, error) {
	rdb := b.meter.stats
	threshold, err := configInt(b.ctx, rdb, "slowlog-log-slower-than")
	if err != nil {
		return Longest{From: "not known: CONFIG GET slowlog-log-slower-than: " + err.Error()}, pass()
	}
	if threshold < 0 {
		return Longest{From: "not known: the server's SLOWLOG is off (slowlog-log-slower-than < 0), and bench leaves a given server's settings alone"}, pass()
	}
	before, err := rdb.SlowLogGet(b.ctx, -1).Result()
	if err != nil {
		return Longest{From: "not known: SLOWLOG GET: " + err.Error()}, pass()
	}
	var lastID int64 = -1
	for _, e := range before {
		lastID = max(lastID, e.ID)
	}
	sent0 := b.meter.sent.snapshot()
	if err := pass(); err != nil {
		return Longest{}, err
	}
	after, err := rdb.SlowLogGet(b.ctx, -1).Result()
	if err != nil {
		return Longest{From: "not known: SLOWLOG GET: " + err.Error()}, nil
	}
	w := newSlowlogWatch()
	for _, e := range after {
		if e.ID > lastID {
			w.add([]redis.SlowLog{e})
		}
	}
	sent := b.meter.sent.snapshot()
	for name, n := range sent0 {
		sent[name] -= n
	}
	from := fmt.Sprintf("the server's own SLOWLOG, which logs calls over %d µs", threshold)
	l := w.of(sent, from, false)
	if l.Us == nil {
		l.From = fmt.Sprintf("no call over the server's slowlog-log-slower-than of %d µs in its SLOWLOG", threshold)
	}
	return l, nil
}
