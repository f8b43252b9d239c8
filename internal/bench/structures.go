package bench

import (
	"hourglass/store"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// limiter hits the sliding limiter from 16 goroutines over 1,000 users.
func (b *bencher) limiter(st *store.Store, hits int) (float64, error) {
	l, err := st.NewLimiter(store.LimiterSpec{Name: "bench", Pattern: store.BenchKey("rl:<u>"), Kind: store.Sliding, Window: time.Minute, Limit: 1 << 30})
	if err != nil {
		return 0, err
	}
	return b.parallel(hits, func(i int) error {
		_, err := l.Allow(b.ctx, strconv.Itoa(i%1000))
		return err
	})
}

// delayQueue enqueues tasks in batches of 100, then claims and acknowledges them 100 at a time,
// from 16 goroutines.
func (b *bencher) delayQueue(st *store.Store, tasks int) (float64, float64, error) {
	q := st.DelayQueue(store.BenchKey("dq"), store.Milliseconds)
	batches := tasks / 100
	enq, err := b.parallel(batches, func(i int) error {
		ts := make([]string, 100)
		for j := range ts {
			ts[j] = strconv.Itoa(i*100 + j)
		}
		return q.Enqueue(b.ctx, time.Time{}, ts...)
	})
	if err != nil {
		return 0, 0, err
	}
	claim, err := b.parallel(batches, func(int) error {
		c, err := q.Claim(b.ctx, 100, time.Minute)
		if err != nil {
			return err
		}
		_, err = q.Ack(b.ctx, c)
		return err
	})
	return enq * 100, claim * 100, err
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
