package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// WriteDemoHistory fills an embedded Redis with what a day of traffic leaves, so a snapshot or a
// repair of it has something to show. It writes events in every family over the last 48 hours,
// heavier in the day than at night, Zipf over the dims. Then it leaves a few keys as leaky writers
// do: no TTL, and a TTL far past the retention. It returns the events written. It stops with ctx's
// error within moments of ctx's end, however many families there are.
func WriteDemoHistory(ctx context.Context, st *store.Store, families []*store.Family) (int64, error) {
	const perHour = 400
	now := st.Now()
	w := st.NewWriter(store.WriterOptions{})
	var events int64
	flush := func() error {
		fr, err := w.Flush(ctx)
		events += fr.Events
		return err
	}
	for i, f := range families {
		gen := NewGenerator(f, DemoTuples, uint64(i+1))
		for h := 47; h >= 0; h-- {
			if err := ctx.Err(); err != nil {
				return events, err
			}
			at := now.Add(-time.Duration(h) * time.Hour)
			n := perHour/2 + perHour*(at.In(st.Location()).Hour()%24)/24
			for range n {
				if err := w.Add(f, gen.Next(), 1, at); err != nil {
					return events, err
				}
			}
		}
		if w.Pending() >= flushPending { // what waits stays a flush's worth, whatever the families
			if err := flush(); err != nil {
				return events, err
			}
		}
	}
	if err := flush(); err != nil {
		return events, err
	}
	rdb := st.Client()
	for _, f := range families {
		if err := ctx.Err(); err != nil {
			return events, err
		}
		g := f.Granularities()[0]
		cur := store.WindowAt(g, now, st.Location())
		for j := range 3 { // a leak: INCR after the key's TTL ran out
			dims := make([]string, len(f.Dims()))
			for d, name := range f.Dims() {
				dims[d] = dimValue(name, 900+j)
			}
			k, err := f.Key(cur, dims)
			if err != nil {
				return events, err
			}
			if err := rdb.IncrBy(ctx, k, int64(7*(j+1))).Err(); err != nil {
				return events, fmt.Errorf("%s: %w", k, err)
			}
		}
		dims := make([]string, len(f.Dims()))
		for d, name := range f.Dims() {
			dims[d] = dimValue(name, 990)
		}
		k, err := f.Key(cur, dims)
		if err != nil {
			return events, err
		}
		if err := rdb.Set(ctx, k, 5, 90*24*time.Hour).Err(); err != nil { // a writer keeping keys 90 days
			return events, fmt.Errorf("%s: %w", k, err)
		}
	}
	return events, nil
}
