package traffic

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// DemoTuples is how many dims tuples the demo spreads each family's traffic over.
const DemoTuples = 50

// Demo writes counter traffic into every family at a gently swinging rate, so totals and rates
// move the way live traffic does.
type Demo struct {
	w       *store.Writer
	gens    []*Generator
	rate    float64
	day     *time.Location // when set, the rate follows DayShape in each family's zone from the start
	events  atomic.Int64   // added to the writer
	written atomic.Int64   // confirmed written by Redis
}

// NewDemo prepares demo traffic of rate events a second into each of families.
func NewDemo(st *store.Store, families []*store.Family, rate float64) *Demo {
	d := &Demo{w: st.NewWriter(store.WriterOptions{}), rate: rate}
	for i, f := range families {
		d.gens = append(d.gens, NewGenerator(f, DemoTuples, uint64(i+1)))
	}
	return d
}

// Generators are the demo's generators, one per family, in the order given.
func (d *Demo) Generators() []*Generator { return d.gens }

// Events is how many events the demo has added to its writer.
func (d *Demo) Events() int64 { return d.events.Load() }

// Written is how many of the demo's events Redis has confirmed written.
func (d *Demo) Written() int64 { return d.written.Load() }

// Run adds events every 100 ms and flushes them until ctx ends; it paces itself well under the
// few thousand script calls a second miniredis manages. A flush that fails goes to report, and
// the first that succeeds after failures reports nil, so a caller can say when a fault passed.
func (d *Demo) Run(ctx context.Context, report func(error)) {
	const tick = 100 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	owed := make([]float64, len(d.gens))
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			phase := now.Sub(start).Seconds() / 60 * 2 * math.Pi
			for i, g := range d.gens {
				// Each family swings between half and one and a half times the rate, a minute a cycle.
				owed[i] += d.rate * d.dayFactor(g.family, start, now) * tick.Seconds() * (1 + 0.5*math.Sin(phase+float64(i)))
				for ; owed[i] >= 1; owed[i]-- {
					if d.w.Add(g.family, g.Next(), 1, time.Time{}) == nil {
						d.events.Add(1)
					}
				}
			}
			fr, err := d.w.Flush(ctx)
			d.written.Add(fr.Events)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				report(err)
				failing = true
			case failing:
				report(nil)
				failing = false
			}
		}
	}
}

// dayFactor is how much busier the day makes f's traffic at now than at start: 1 unless the demo
// follows the day, so a demo left running for hours carries on the history's curve.
func (d *Demo) dayFactor(f *store.Family, start, now time.Time) float64 {
	if d.day == nil {
		return 1
	}
	zone := f.Zone(d.day)
	return DayShape(now, zone) / DayShape(start, zone)
}

// Steady writes rate events a second into f, over the demo's dims, until ctx ends: the console's
// test traffic. A flush that fails goes to report, and nil once one succeeds again.
func Steady(ctx context.Context, st *store.Store, f *store.Family, rate float64, report func(error)) {
	d := &Demo{w: st.NewWriter(store.WriterOptions{}), rate: rate, gens: []*Generator{NewGenerator(f, DemoTuples, 99)}}
	d.Run(ctx, report)
}

// StartDemo runs the embedded Redis's live demo until ctx ends. Counter traffic runs at rate events
// a second per family at the start, then follows the day's shape as the history does. Every configured queue, limiter, unique and lock is driven at a tenth of
// that, with now and then an anomaly for TTL health to find. It runs only ever on the embedded
// Redis: nothing of anyone's to spoil. done is closed once all of it has stopped.
func StartDemo(ctx context.Context, st *store.Store, cfg *config.Config, rate float64) (demo *Demo, done <-chan struct{}, err error) {
	demo = NewDemo(st, cfg.Counters, rate)
	demo.day = st.Location()
	sd, err := newStructDemo(st, cfg.Structures, cfg.Counters, rate/10)
	if err != nil {
		return nil, nil, err
	}
	sd.anomalies = true
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		structsDone := make(chan struct{})
		go func() {
			defer close(structsDone)
			sd.run(ctx, func(error) {})
		}()
		demo.Run(ctx, func(error) {})
		<-structsDone
	}()
	return demo, finished, nil
}

// BurstStructures gives the configured queues, limiters, uniques and locks some demo traffic at
// once, anomalies included, so a one-shot command on the embedded Redis has structures to show.
func BurstStructures(ctx context.Context, st *store.Store, cfg *config.Config) error {
	sd, err := newStructDemo(st, cfg.Structures, cfg.Counters, 30)
	if err != nil {
		return err
	}
	sd.anomalies = true // only ever called on the embedded Redis
	return sd.burst(ctx, 30)
}
