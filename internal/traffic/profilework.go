package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// work is what one profile entry does per batch of n operations, and what it does at the end.
// Both say how many operations Redis confirmed. A batch starts no operation once ctx (the run)
// has ended; the calls it makes use the context its entry was built with, which outlives the run
// by a moment so an operation under way completes.
type work struct {
	batch  func(ctx context.Context, n int) (int64, error)
	finish func(context.Context) (int64, error)
}

func nothing(context.Context) (int64, error) { return 0, nil }

// chunk is the most tasks or members one step of a batch sends: a batch stops between steps once
// the run has ended, and a step's calls are the most a run's end waits for.
const chunk = 500

// refusal is err, when it is permanent, as the one line that names the command, the key (when
// there is one) and the user: the command a NOPERM names, or the one given. Other errors are
// returned as they are.
func refusal(err error, command, key, user string) error {
	if err == nil || !store.Permanent(err) {
		return err
	}
	if r := store.Refused(err); r != "" && r != "key" && r != "channel" && r != "command" {
		command = strings.ToUpper(strings.ReplaceAll(r, "|", " "))
	}
	return &store.CommandError{Command: command, Key: key, User: user, Err: store.Reply(err)}
}

// profileWork returns the work of one entry; its Redis calls use ctx. On a real Redis (embedded
// false) it keeps to test keys: a test queue beside each queue, test users, test lock names and
// a test limiter name.
func profileWork(ctx context.Context, st *store.Store, cfg *config.Config, e config.ProfileEntry, r *profileResult, embedded bool, user string) (work, error) {
	rnd := rand.New(rand.NewPCG(uint64(len(e.Name)), 17))
	s := ownWritable(cfg.Structures)
	switch e.Kind {
	case "counter":
		f, err := cfg.Counter(e.Name)
		if err != nil {
			return work{}, err
		}
		return counterWork(ctx, st, f, r, user), nil
	case "delay_queue":
		for _, q := range s.DelayQueues {
			if q.Name == e.Name {
				return delayQueueWork(ctx, st, q, r, embedded, user), nil
			}
		}
	case "list_queue":
		for _, q := range s.ListQueues {
			if q.Name == e.Name {
				return listQueueWork(ctx, st, q, r, embedded, user), nil
			}
		}
	case "limiter":
		for _, l := range cfg.Structures.Limiters {
			if l.Name == e.Name && l.Layout != limits.Hourglass {
				return work{}, fmt.Errorf("limiter %s is %s's: hourglass writes only its own limiters' keys", l.Name, l.Layout)
			}
			if l.Name == e.Name {
				return limiterWork(ctx, st, l, r, rnd, embedded, user)
			}
		}
	case "unique", "bitmap":
		for _, u := range s.Uniques {
			if u.Family.Name() == e.Name {
				return uniqueWork(ctx, st, u, rnd, user), nil
			}
		}
	case "bloom":
		for _, b := range s.Blooms {
			if b.Name == e.Name {
				return bloomWork(ctx, st, b, r, rnd, embedded, user)
			}
		}
	case "lock":
		for _, l := range s.Locks {
			if l.Name == e.Name {
				return lockWork(ctx, st, l, rnd, embedded, user), nil
			}
		}
	}
	return work{}, fmt.Errorf("profile: no %s named %q", e.Kind, e.Name)
}

// counterWork adds events over the family's dims through a batch writer and flushes each batch;
// it counts the events Redis confirmed, so events a failed flush keeps are counted when a later
// one writes them.
func counterWork(ctx context.Context, st *store.Store, f *store.Family, r *profileResult, user string) work {
	w, gen := st.NewWriter(store.WriterOptions{}), NewGenerator(f, 1000, 5)
	flush := func(ctx context.Context) (int64, error) {
		fr, err := w.Flush(ctx)
		if ce := w.Blame(err, user); ce != nil {
			return fr.Events, ce
		}
		return fr.Events, err
	}
	return work{batch: func(_ context.Context, n int) (int64, error) {
		for range n {
			if err := w.Add(f, gen.Next(), 1, time.Time{}); err != nil {
				return 0, err
			}
		}
		return flush(ctx)
	}, finish: func(ctx context.Context) (int64, error) {
		done, err := flush(ctx)
		if sent, waiting := w.Held(); sent+waiting > 0 {
			// Answers lost at the end: their records say which were written.
			rc := w.CheckRecords(ctx)
			done += rc.Applied.Events
			if rc.Unknown+rc.NotApplied+waiting > 0 {
				r.extra = fmt.Sprintf(" not_written_pairs=%d not_confirmed_pairs=%d", rc.NotApplied+waiting, rc.Unknown)
			}
		}
		return done, err
	}}
}

// delayQueueWork enqueues tasks due now, claims and acknowledges them, a chunk at a time; it
// counts the tasks enqueued.
func delayQueueWork(ctx context.Context, st *store.Store, q scanner.DelayQueueSpec, r *profileResult, embedded bool, user string) work {
	key := sampleQueueKey(q)
	if !embedded {
		key = store.TestQueueKey(key)
		r.extra = " on " + key
	}
	dq := st.DelayQueue(key, q.Unit)
	var acked atomic.Int64
	return work{batch: func(run context.Context, n int) (int64, error) {
		var done int64
		for ; n > 0 && run.Err() == nil; n -= chunk {
			tasks := taskNames("task", min(n, chunk))
			if err := dq.Enqueue(ctx, time.Time{}, tasks...); err != nil {
				return done, refusal(err, "ZADD", dq.Key, user)
			}
			done += int64(len(tasks))
			got, err := dq.Claim(ctx, len(tasks), 30*time.Second)
			if err != nil {
				return done, refusal(err, "EVALSHA", dq.Key, user)
			}
			k, err := dq.Ack(ctx, got)
			acked.Add(k)
			if err != nil {
				return done, refusal(err, "ZREM", dq.InFlight, user)
			}
		}
		return done, nil
	}, finish: func(context.Context) (int64, error) {
		r.extra += fmt.Sprintf(" acked=%d", acked.Load())
		return 0, nil
	}}
}

// listQueueWork pushes tasks, pops and acknowledges them, a chunk at a time; it counts the tasks
// pushed.
func listQueueWork(ctx context.Context, st *store.Store, q scanner.ListQueueSpec, r *profileResult, embedded bool, user string) work {
	key := q.Key
	if !embedded {
		key = store.TestQueueKey(key)
		r.extra = " on " + key
	}
	lq := st.ListQueue(key)
	return work{batch: func(run context.Context, n int) (int64, error) {
		var done int64
		for ; n > 0 && run.Err() == nil; n -= chunk {
			tasks := taskNames("job", min(n, chunk))
			if err := lq.Push(ctx, tasks...); err != nil {
				return done, refusal(err, "LPUSH", lq.Key, user)
			}
			done += int64(len(tasks))
			for range tasks {
				task, ok, err := lq.Pop(ctx, time.Millisecond)
				if err != nil || !ok {
					return done, refusal(err, "BLMOVE", lq.Key, user)
				}
				if err := lq.Ack(ctx, task); err != nil {
					return done, refusal(err, "LREM", lq.Processing, user)
				}
			}
		}
		return done, nil
	}, finish: nothing}
}

// taskNames makes n task names unique to this moment: "<prefix>-<unix ns>-<i>".
func taskNames(prefix string, n int) []string {
	now := time.Now().UnixNano()
	tasks := make([]string, n)
	for i := range tasks {
		tasks[i] = fmt.Sprintf("%s-%d-%d", prefix, now, i)
	}
	return tasks
}

// limiterWork hits the limiter for Zipf-drawn users, flushing its decision counters each second
// so watchers see the rates as they go; it counts the hits decided.
func limiterWork(ctx context.Context, st *store.Store, l scanner.LimiterSpec, r *profileResult, rnd *rand.Rand, embedded bool, user string) (work, error) {
	spec := l.LimiterSpec
	if !embedded { // the test decisions go to their own hourly counters
		spec.Name = store.TestName(spec.Name)
	}
	lim, err := st.NewLimiter(spec)
	if err != nil {
		return work{}, err
	}
	users := rand.NewZipf(rnd, 1.3, 1, 999)
	dims := len(l.Pattern.Dims())
	var allowed, rejected atomic.Int64
	lastFlush := time.Now()
	return work{batch: func(run context.Context, n int) (int64, error) {
		if time.Since(lastFlush) >= time.Second {
			lastFlush = time.Now()
			if err := lim.Flush(ctx); err != nil {
				return 0, refusal(err, "EVALSHA", "", user)
			}
		}
		var done int64
		for ; done < int64(n) && run.Err() == nil; done++ {
			vals := make([]string, dims)
			for i := range vals { // not a real user's key
				vals[i] = store.TestValue(fmt.Sprint("user", users.Uint64()))
			}
			d, err := lim.Allow(ctx, vals...)
			if err != nil {
				key, _ := lim.Key(vals...)
				return done, refusal(err, "EVALSHA", key, user)
			}
			if d.Allowed {
				allowed.Add(1)
			} else {
				rejected.Add(1)
			}
		}
		return done, nil
	}, finish: func(ctx context.Context) (int64, error) {
		r.extra = fmt.Sprintf(" allowed=%d rejected=%d", allowed.Load(), rejected.Load())
		return 0, refusal(lim.Flush(ctx), "EVALSHA", "", user)
	}}, nil
}

// uniqueWork adds random members to one of a few dims' current window (days when it has them), a
// chunk at a time; it counts the members added.
func uniqueWork(ctx context.Context, st *store.Store, u scanner.UniqueSpec, rnd *rand.Rand, user string) work {
	un := st.NewUniques(u.Kind, u.Family)
	g := u.Family.Granularities()[len(u.Family.Granularities())-1]
	command := map[store.UniqueKind]string{store.HyperLogLog: "PFADD", store.Bitmap: "SETBIT"}[u.Kind]
	return work{batch: func(run context.Context, n int) (int64, error) {
		var done int64
		for ; n > 0 && run.Err() == nil; n -= chunk {
			members := make([]string, min(n, chunk))
			for i := range members {
				members[i] = fmt.Sprint(rnd.IntN(100_000))
			}
			dims := make([]string, len(u.Family.Dims()))
			for i, name := range u.Family.Dims() {
				dims[i] = dimValue(name, rnd.IntN(5))
			}
			if err := un.Add(ctx, g, dims, time.Time{}, members...); err != nil {
				key, _ := u.Family.Key(store.WindowAt(g, st.Now(), u.Family.Zone(st.Location())), dims)
				return done, refusal(err, command, key, user)
			}
			done += int64(len(members))
		}
		return done, nil
	}, finish: nothing}
}

// lockWork takes and releases locks of the pattern, test names only on a real Redis; it counts
// the locks asked for.
func lockWork(ctx context.Context, st *store.Store, l scanner.LockSpec, rnd *rand.Rand, embedded bool, user string) work {
	return work{batch: func(run context.Context, n int) (int64, error) {
		var done int64
		for ; done < int64(n) && run.Err() == nil; done++ {
			dims := make([]string, len(l.Pattern.Dims()))
			for i := range dims {
				dims[i] = fmt.Sprint(rnd.IntN(50))
				if !embedded { // never a real application's lock
					dims[i] = store.TestValue(dims[i])
				}
			}
			key, err := l.Pattern.Key(dims, "")
			if err != nil {
				return done, err
			}
			lock, ok, err := st.Acquire(ctx, key, 5*time.Second)
			if err != nil {
				return done, refusal(err, "SET", key, user)
			}
			if ok {
				if _, err := lock.Release(ctx); err != nil {
					return done, refusal(err, "EVALSHA", key, user)
				}
			}
		}
		return done, nil
	}, finish: nothing}
}
