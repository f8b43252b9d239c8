package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"hourglass/internal/config"
	"hourglass/scanner"
	"hourglass/store"
)

// work is what one profile entry does per batch of n operations, and what it does at the end.
type work struct {
	batch  func(n int) error
	finish func(context.Context) error
}

func nothing(context.Context) error { return nil }

// profileWork returns the work of one entry. On a real Redis (embedded false) it keeps to test
// keys: a test queue beside each queue, test users, test lock names and a test limiter name.
func profileWork(ctx context.Context, st *store.Store, cfg *config.Config, e config.ProfileEntry, r *profileResult, embedded bool) (work, error) {
	// A batch that has begun runs to its end, so the run's deadline leaves no task half-handled
	// (pushed, not popped) and no lock taken, not released.
	ctx = context.WithoutCancel(ctx)
	rnd := rand.New(rand.NewPCG(uint64(len(e.Name)), 17))
	s := ownWritable(cfg.Structures)
	switch e.Kind {
	case "counter":
		f, err := cfg.Counter(e.Name)
		if err != nil {
			return work{}, err
		}
		return counterWork(ctx, st, f), nil
	case "delay_queue":
		for _, q := range s.DelayQueues {
			if q.Name == e.Name {
				return delayQueueWork(ctx, st, q, r, embedded), nil
			}
		}
	case "list_queue":
		for _, q := range s.ListQueues {
			if q.Name == e.Name {
				return listQueueWork(ctx, st, q, r, embedded), nil
			}
		}
	case "limiter":
		for _, l := range cfg.Structures.Limiters {
			if l.Name == e.Name && l.Layout != store.Hourglass {
				return work{}, fmt.Errorf("limiter %s is %s's: hourglass writes only its own limiters' keys", l.Name, l.Layout)
			}
			if l.Name == e.Name {
				return limiterWork(ctx, st, l, r, rnd, embedded)
			}
		}
	case "unique", "bitmap":
		for _, u := range s.Uniques {
			if u.Family.Name() == e.Name {
				return uniqueWork(ctx, st, u, rnd), nil
			}
		}
	case "lock":
		for _, l := range s.Locks {
			if l.Name == e.Name {
				return lockWork(ctx, st, l, rnd, embedded), nil
			}
		}
	}
	return work{}, fmt.Errorf("profile: no %s named %q", e.Kind, e.Name)
}

// counterWork adds events over the family's dims through a batch writer, flushing each batch.
func counterWork(ctx context.Context, st *store.Store, f *store.Family) work {
	w, gen := st.NewWriter(store.WriterOptions{}), NewGenerator(f, 1000, 5)
	flush := func(ctx context.Context) error {
		_, err := w.Flush(ctx)
		return err
	}
	return work{batch: func(n int) error {
		for range n {
			if err := w.Add(f, gen.Next(), 1, time.Time{}); err != nil {
				return err
			}
		}
		return flush(ctx)
	}, finish: flush}
}

// delayQueueWork enqueues n tasks due now, claims and acknowledges them.
func delayQueueWork(ctx context.Context, st *store.Store, q scanner.DelayQueueSpec, r *profileResult, embedded bool) work {
	key := sampleQueueKey(q)
	if !embedded {
		key = store.TestQueueKey(key)
		r.extra = " on " + key
	}
	dq := st.DelayQueue(key, q.Unit)
	var acked atomic.Int64
	return work{batch: func(n int) error {
		if err := dq.Enqueue(ctx, time.Time{}, taskNames("task", n)...); err != nil {
			return err
		}
		got, err := dq.Claim(ctx, n, 30*time.Second)
		if err != nil {
			return err
		}
		k, err := dq.Ack(ctx, got)
		acked.Add(k)
		return err
	}, finish: func(context.Context) error {
		r.extra += fmt.Sprintf(" acked=%d", acked.Load())
		return nil
	}}
}

// listQueueWork pushes n tasks, pops and acknowledges them.
func listQueueWork(ctx context.Context, st *store.Store, q scanner.ListQueueSpec, r *profileResult, embedded bool) work {
	key := q.Key
	if !embedded {
		key = store.TestQueueKey(key)
		r.extra = " on " + key
	}
	lq := st.ListQueue(key)
	return work{batch: func(n int) error {
		if err := lq.Push(ctx, taskNames("job", n)...); err != nil {
			return err
		}
		for range n {
			task, ok, err := lq.Pop(ctx, time.Millisecond)
			if err != nil || !ok {
				return err
			}
			if err := lq.Ack(ctx, task); err != nil {
				return err
			}
		}
		return nil
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
// so watchers see the rates as they go.
func limiterWork(ctx context.Context, st *store.Store, l scanner.LimiterSpec, r *profileResult, rnd *rand.Rand, embedded bool) (work, error) {
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
	return work{batch: func(n int) error {
		if time.Since(lastFlush) >= time.Second {
			lastFlush = time.Now()
			if err := lim.Flush(ctx); err != nil {
				return err
			}
		}
		for range n {
			vals := make([]string, dims)
			for i := range vals { // not a real user's key
				vals[i] = store.TestValue(fmt.Sprint("user", users.Uint64()))
			}
			d, err := lim.Allow(ctx, vals...)
			if err != nil {
				return err
			}
			if d.Allowed {
				allowed.Add(1)
			} else {
				rejected.Add(1)
			}
		}
		return nil
	}, finish: func(ctx context.Context) error {
		r.extra = fmt.Sprintf(" allowed=%d rejected=%d", allowed.Load(), rejected.Load())
		return lim.Flush(ctx)
	}}, nil
}

// uniqueWork adds n random members to one of a few dims' current window (days when it has them).
func uniqueWork(ctx context.Context, st *store.Store, u scanner.UniqueSpec, rnd *rand.Rand) work {
	un := st.NewUniques(u.Kind, u.Family)
	g := u.Family.Granularities()[len(u.Family.Granularities())-1]
	return work{batch: func(n int) error {
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprint(rnd.IntN(100_000))
		}
		dims := make([]string, len(u.Family.Dims()))
		for i, name := range u.Family.Dims() {
			dims[i] = dimValue(name, rnd.IntN(5))
		}
		return un.Add(ctx, g, dims, time.Time{}, members...)
	}, finish: nothing}
}

// lockWork takes and releases n locks of the pattern, test names only on a real Redis.
func lockWork(ctx context.Context, st *store.Store, l scanner.LockSpec, rnd *rand.Rand, embedded bool) work {
	return work{batch: func(n int) error {
		for range n {
			dims := make([]string, len(l.Pattern.Dims()))
			for i := range dims {
				dims[i] = fmt.Sprint(rnd.IntN(50))
				if !embedded { // never a real application's lock
					dims[i] = store.TestValue(dims[i])
				}
			}
			key, err := l.Pattern.Key(dims, "")
			if err != nil {
				return err
			}
			lock, ok, err := st.Acquire(ctx, key, 5*time.Second)
			if err != nil {
				return err
			}
			if ok {
				if _, err := lock.Release(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	}, finish: nothing}
}
