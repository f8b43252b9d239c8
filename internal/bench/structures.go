package bench

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// structures measures the sliding limiter, the delay queue and the Bloom filter, with what Redis
// spends on each.
func (b *bencher) structures(rep *Report, st *store.Store, events int) error {
	n := min(max(events/5, 1000), 200_000)
	b.step("limiter: %s hits", commas(n))
	var err error
	if rep.Limiter, rep.LimiterUs, err = b.limiter(st, n); err != nil {
		return err
	}
	b.step("delay queue: %s tasks enqueued, claimed and acknowledged", commas(n))
	if err := b.delayQueue(rep, st, n); err != nil {
		return err
	}
	b.step("bloom filter: %s elements added and checked, beside raw SETBIT/GETBIT", commas(n))
	return b.bloom(rep, st, n)
}

// perUnit is a case's µs a unit, or nil when its server time is not known.
func perUnit(st *ServerTime) *float64 {
	if st == nil {
		return nil
	}
	return &st.UsPer
}

// limiter hits the sliding limiter from 16 goroutines over 1,000 users.
func (b *bencher) limiter(st *store.Store, hits int) (float64, *float64, error) {
	l, err := st.NewLimiter(store.LimiterSpec{Name: "bench", Pattern: store.BenchKey("rl:<u>"), Kind: store.Sliding, Window: time.Minute, Limit: 1 << 30})
	if err != nil {
		return 0, nil, err
	}
	var rate float64
	stime, err := b.measure("limiter", float64(hits), "hit", func() error {
		var err error
		rate, err = b.parallel(hits, func(i int) error {
			_, err := l.Allow(b.ctx, strconv.Itoa(i%1000))
			return err
		})
		return err
	})
	return rate, perUnit(stime), err
}

// delayQueue enqueues tasks in batches of 100, then claims them 100 at a time, then
// acknowledges each claim, from 16 goroutines: three phases, so that Redis' time on each is its
// own.
func (b *bencher) delayQueue(rep *Report, st *store.Store, tasks int) error {
	q := st.DelayQueue(store.BenchKey("dq"), store.Milliseconds)
	batches := max(tasks/100, 1)
	tasks = batches * 100
	var enq, claimed, acked float64
	stime, err := b.measure("delay_queue_enqueue", float64(tasks), "task", func() (err error) {
		enq, err = b.parallel(batches, func(i int) error {
			ts := make([]string, 100)
			for j := range ts {
				ts[j] = strconv.Itoa(i*100 + j)
			}
			return q.Enqueue(b.ctx, time.Time{}, ts...)
		})
		return err
	})
	if err != nil {
		return err
	}
	rep.EnqueueUs = perUnit(stime)
	claims := make([]store.Claim, batches)
	if stime, err = b.measure("delay_queue_claim", float64(tasks), "task", func() (err error) {
		claimed, err = b.parallel(batches, func(i int) (err error) {
			claims[i], err = q.Claim(b.ctx, 100, time.Minute)
			return err
		})
		return err
	}); err != nil {
		return err
	}
	rep.ClaimUs = perUnit(stime)
	if stime, err = b.measure("delay_queue_ack", float64(tasks), "task", func() (err error) {
		acked, err = b.parallel(batches, func(i int) error {
			_, err := q.Ack(b.ctx, claims[i])
			return err
		})
		return err
	}); err != nil {
		return err
	}
	rep.AckUs = perUnit(stime)
	// Tasks a second through both: each phase's time is batches over its rate.
	rep.Enqueue, rep.ClaimAck = enq*100, 100/(1/claimed+1/acked)
	return nil
}

// parallel runs op n times on 16 goroutines and returns ops a second.
func (b *bencher) parallel(n int, op func(i int) error) (float64, error) {
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), firstErr
}
