package bench

import (
	"context"
	"fmt"
	"hourglass/scanner"
	"hourglass/store"
	"strconv"
	"time"
)

// consoleLoad polls Redis as the console does at the default refresh for loadFor, and returns the
// share of one CPU Redis spent meanwhile.
func (b *bencher) consoleLoad(st *store.Store, f *store.Family) (console, idle float64, err error) {
	// An idle Redis: no traffic, and a keyspace the size of the demo's (10,000 counter keys) on
	// bench's own server; a given Redis keeps its own keys beside them.
	if err := b.clean(); err != nil {
		return 0, 0, err
	}
	wr := st.NewWriter(store.WriterOptions{})
	for i := range 5000 {
		if err := wr.Add(f, []string{"c" + strconv.Itoa(i%97), strconv.Itoa(i)}, 1, time.Time{}); err != nil {
			return 0, 0, err
		}
	}
	if _, err := wr.Flush(b.ctx); err != nil {
		return 0, 0, err
	}
	// Redis does work of its own meanwhile (its cron, and returning the memory of the keys
	// deleted above), so seconds with the console polling alternate with seconds without, and
	// the console's load is the difference: what Redis does anyway falls on both alike.
	w := scanner.NewWatcher(b.rdb, []*store.Family{f}, scanner.Options{KeysPerSecond: 20_000, Location: time.UTC},
		scanner.SnapshotOptions{Now: st.Now, Location: time.UTC})
	var with, without float64 // CPU seconds
	seconds := int(b.loadFor / time.Second)
	for i := range 2 * seconds {
		cpu0, err := redisCPU(b.ctx, b.rdb)
		if err != nil {
			return 0, 0, err
		}
		next := time.Now().Add(time.Second)
		if i%2 == 0 {
			ctx, cancel := context.WithTimeout(b.ctx, 6*time.Second)
			_, err := w.Poll(ctx, 500*time.Millisecond, f.Name())
			cancel()
			if err != nil {
				return 0, 0, err
			}
		}
		select {
		case <-b.ctx.Done():
			return 0, 0, b.ctx.Err()
		case <-time.After(time.Until(next)):
		}
		cpu1, err := redisCPU(b.ctx, b.rdb)
		if err != nil {
			return 0, 0, err
		}
		if i%2 == 0 {
			with += cpu1 - cpu0
		} else {
			without += cpu1 - cpu0
		}
	}
	with, without = 100*with/float64(seconds), 100*without/float64(seconds)
	return max(with-without, 0), without, nil
}

// sweep fills keys family keys and measures a sweep and a raw SCAN of the whole server.
func (b *bencher) sweep(n int) (float64, float64, error) {
	fam, err := store.NewFamily(store.FamilySpec{Name: "sweep", Pattern: store.BenchKey("sw:<a>:<b>:<window>"),
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		return 0, 0, err
	}
	if err := b.clean(); err != nil {
		return 0, 0, err
	}
	hour := time.Now().UTC().Format("2006010215")
	for start := 0; start < n; start += 10_000 {
		pipe := b.rdb.Pipeline()
		for i := start; i < min(start+10_000, n); i++ {
			pipe.Set(b.ctx, store.BenchKey(fmt.Sprintf("sw:a%d:b%d:%s", i%97, i, hour)), i, 48*time.Hour)
		}
		if _, err := pipe.Exec(b.ctx); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	var cursor uint64
	var raw int
	for {
		page, next, err := b.rdb.Scan(b.ctx, cursor, "", 1000).Result()
		if err != nil {
			return 0, 0, err
		}
		raw += len(page)
		if cursor = next; cursor == 0 {
			break
		}
	}
	rawRate := float64(raw) / time.Since(start).Seconds()
	start = time.Now()
	var seen int
	s := scanner.New(b.rdb, []*store.Family{fam}, scanner.Options{Count: 1000, Location: time.UTC})
	if err := s.Run(b.ctx, func(p scanner.Page) { seen += p.Seen }); err != nil {
		return 0, 0, err
	}
	return float64(seen) / time.Since(start).Seconds(), rawRate, nil
}
