package traffic

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// DemoRate is the demo's default rate: events a second per family.
const DemoRate = 300

// historyHours is how many hour windows the demo history fills, the current one included.
const historyHours = 48

// WriteDemoHistory fills an embedded Redis with what two days of traffic leave, so every view has
// something to show. Each family gets 48 hours at the scale of rate events a second, with a day's
// shape in its time zone: quiet at night, busiest in the afternoon. The hour of now is at rate
// itself, so the live demo carries on where the history stops. An hour's events go to the demo's
// dims by the generator's Zipf weights, a write per tuple, so the writes do not grow with the rate.
// Then it leaves a few keys as leaky writers do: no TTL, and a TTL far past the retention. It
// returns the events written. It stops with ctx's error within moments of ctx's end.
func WriteDemoHistory(ctx context.Context, st *store.Store, families []*store.Family, rate float64) (int64, error) {
	now := st.Now()
	w := st.NewWriter(store.WriterOptions{})
	var events, pending int64 // the writer counts its calls; the history adds many events a call
	flush := func() error {
		if _, err := w.Flush(ctx); err != nil {
			return err
		}
		events, pending = events+pending, 0
		return nil
	}
	weights := zipfWeights(DemoTuples)
	for i, f := range families {
		if err := ctx.Err(); err != nil {
			return events, err
		}
		tuples := NewGenerator(f, DemoTuples, uint64(i+1)).Tuples()
		noise := rand.New(rand.NewPCG(uint64(i+1), historyHours))
		n, err := writeFamilyHistory(w, f, tuples, weights, rate, now, f.Zone(st.Location()), noise)
		pending += n
		if err != nil {
			return events, err
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
	return events, writeLeaks(ctx, st, families, now)
}

// writeFamilyHistory adds f's hours up to now to w and returns the events added. Past hours vary
// by up to a tenth either way, as real hours do; the current hour follows the curve up to now.
func writeFamilyHistory(w *store.Writer, f *store.Family, tuples [][]string, weights []float64,
	rate float64, now time.Time, zone *time.Location, noise *rand.Rand) (int64, error) {
	var added int64
	scale := rate / DayShape(now, zone) // the rate at the busiest moment of the day
	win := store.WindowAt(store.Hour, now, zone)
	for h := range historyHours {
		end, jitter := win.End, 0.9+0.2*noise.Float64()
		if h == 0 {
			end, jitter = now, 1
		}
		span := end.Sub(win.Start)
		mid := win.Start.Add(span / 2)
		total := scale * DayShape(mid, zone) * span.Seconds() * jitter
		var done int64
		var share float64
		for k, dims := range tuples {
			share += weights[k]
			n := int64(math.Round(total*share)) - done // rounded so the tuples sum to the hour's total
			if n <= 0 {
				continue
			}
			if err := w.Add(f, dims, n, mid); err != nil {
				return added, err
			}
			done += n
		}
		added += done
		win = win.Prev()
	}
	return added, nil
}

// DayShape is how busy the demo's traffic is at t in zone, against the busiest moment of the day:
// a fifth at 04:00, rising to all of it at 16:00 and back, on a smooth curve.
func DayShape(t time.Time, zone *time.Location) float64 {
	l := t.In(zone)
	hour := float64(l.Hour()) + float64(l.Minute())/60 + float64(l.Second())/3600
	return 0.2 + 0.8*(1-math.Cos(2*math.Pi*(hour-4)/24))/2
}

// zipfWeights are the shares of k tuples that the Generator's Zipf draws give, summing to 1:
// tuple i is drawn in proportion to (1+i)^-1.1.
func zipfWeights(k int) []float64 {
	ws := make([]float64, k)
	var sum float64
	for i := range ws {
		ws[i] = math.Pow(float64(1+i), -1.1)
		sum += ws[i]
	}
	for i := range ws {
		ws[i] /= sum
	}
	return ws
}

// writeLeaks leaves in each family's current window three keys written after their TTL ran out
// and one kept 90 days, for TTL health to find.
func writeLeaks(ctx context.Context, st *store.Store, families []*store.Family, now time.Time) error {
	rdb := st.Client()
	for _, f := range families {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur := store.WindowAt(f.Granularities()[0], now, f.Zone(st.Location()))
		for j := range 3 { // a leak: INCR after the key's TTL ran out
			k, err := leakKey(f, cur, 900+j)
			if err != nil {
				return err
			}
			if err := rdb.IncrBy(ctx, k, int64(7*(j+1))).Err(); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		k, err := leakKey(f, cur, 990)
		if err != nil {
			return err
		}
		if err := rdb.Set(ctx, k, 5, 90*24*time.Hour).Err(); err != nil { // a writer keeping keys 90 days
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// leakKey is f's key in window cur for the i-th value of every dim, beyond the demo's tuples.
func leakKey(f *store.Family, cur store.Window, i int) (string, error) {
	dims := make([]string, len(f.Dims()))
	for d, name := range f.Dims() {
		dims[d] = dimValue(name, i)
	}
	return f.Key(cur, dims)
}
