package watch

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// burstFamily is a counter family written in bursts: burst events into key every period.
type burstFamily struct {
	f      *store.Family
	g      store.Granularity
	key    string
	burst  int64
	period time.Duration
}

func (b burstFamily) rate() float64 { return float64(b.burst) / b.period.Seconds() }

// burstFamilies are a day-only family laid out as Sidekiq's stat:processed:<date> (which Sidekiq
// writes at each 5 s heartbeat) and an hour family, written in UTC, their keys in the windows of
// now.
func burstFamilies(t *testing.T, now time.Time) []burstFamily {
	t.Helper()
	day, err := store.NewFamily(store.FamilySpec{Name: "sidekiq_stat", Pattern: "stat:<name>:<window>",
		DayFormat: "yyyy-MM-dd", DayRetention: 30 * 24 * time.Hour, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	hour, err := store.NewFamily(store.FamilySpec{Name: "pv", Pattern: "pv:<site>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	key := func(f *store.Family, g store.Granularity, dims ...string) string {
		k, err := f.Key(store.WindowAt(g, now, time.UTC), dims)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	return []burstFamily{
		{day, store.Day, key(day, store.Day, "processed"), 65, 5 * time.Second},
		{hour, store.Hour, key(hour, store.Hour, "shop"), 90, 3 * time.Second},
	}
}

// writeBursts writes each family's bursts until ctx ends, the first at once.
func writeBursts(ctx context.Context, t *testing.T, rdb redis.UniversalClient, fams []burstFamily, wg *sync.WaitGroup) {
	for _, b := range fams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(b.period)
			defer tick.Stop()
			for {
				if err := rdb.IncrBy(ctx, b.key, b.burst).Err(); err != nil && ctx.Err() == nil {
					t.Error(err)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
}

// TestRateOfBurstyWriters writes a day-only family in bursts every 5 s (as Sidekiq writes
// stat:processed:<date>) and an hour family in bursts every 3 s on a real server, and polls a
// Watcher at the console's fastest refresh. The totals read from one poll to the next jump (most
// polls see no growth, one sees a whole burst), yet each family's rate, once given, is steady:
// measured from the reads ("reads"), within 20% of the true rate from 20 s of reads on and within
// 6% once they span 45 s, at every poll, and on for ten seconds of polls once the oldest reads
// drop off the minute. Before that there is no rate, and a note says why; a
// one-shot snapshot has none either, and the day-only family has no hour average, null with its
// reason, not 0.
func TestRateOfBurstyWriters(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := redistest.ClearOfHourEnd(t, 3*time.Minute) // one hour and one day window throughout
	bursts := burstFamilies(t, now)
	fams := []*store.Family{bursts[0].f, bursts[1].f}
	for _, b := range bursts {
		rdb.Set(ctx, b.key, 1000, 0) // counts from before the test
	}
	checkOneShot(t, rdb, fams)

	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	writeBursts(wctx, t, rdb, bursts, &wg)
	defer func() { stop(); wg.Wait() }()

	w := New(rdb, fams, scanner.Options{Location: time.UTC, KeysPerSecond: 10_000})
	tick := time.NewTicker(snapshot.MinRefresh)
	defer tick.Stop()
	deadline := time.Now().Add(3 * time.Minute)
	type seen struct {
		polls, still, early, late int     // polls, polls whose total did not grow, polls with a rate under and over 45 s
		full                      int     // polls with a rate over the whole minute, points dropping off its start
		last                      float64 // the total at the last poll
		elo, ehi, lo, hi          float64 // the rates given, lowest and highest, under and over 45 s
		llo, lhi                  float64 // the live sample's own rate (its base read 30-60 s back) over 45 s
	}
	track := make([]seen, len(bursts))
	for done := false; !done; {
		<-tick.C
		if time.Now().After(deadline) {
			t.Fatalf("waited 3m for rates spanning the whole minute: %+v", track)
		}
		st, err := w.Poll(ctx, 50*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Snapshot == nil {
			continue
		}
		done = true
		for i, b := range bursts {
			f, tr := st.Snapshot.Family(b.f.Name()), &track[i]
			checkBurstRate(t, f, b, st)
			if cur := f.CurrentWindow(b.g.String()); cur != nil {
				lf := st.LiveFamily(b.f.Name())
				total := float64(cur.Total)
				if lf != nil && lf.Total != nil {
					total = lf.Total.Estimate
				}
				tr.polls++
				if total == tr.last {
					tr.still++
				}
				tr.last = total
			}
			if f.RatePerSec != nil && f.RateSpanSec < 45 {
				if tr.early == 0 || *f.RatePerSec < tr.elo {
					tr.elo = *f.RatePerSec
				}
				tr.ehi = max(tr.ehi, *f.RatePerSec)
				tr.early++
			}
			if f.RatePerSec != nil && f.RateSpanSec >= 45 {
				if tr.late == 0 || *f.RatePerSec < tr.lo {
					tr.lo = *f.RatePerSec
				}
				tr.hi = max(tr.hi, *f.RatePerSec)
				if lf := st.LiveFamily(b.f.Name()); lf != nil && lf.RatePerSec != nil {
					if tr.llo == 0 || lf.RatePerSec.Estimate < tr.llo {
						tr.llo = lf.RatePerSec.Estimate
					}
					tr.lhi = max(tr.lhi, lf.RatePerSec.Estimate)
				}
				tr.late++
			}
			if f.RateSpanSec >= 59 {
				tr.full++
			}
			done = done && tr.full >= 40
		}
	}
	for i, b := range bursts {
		tr := track[i]
		t.Logf("%s: true rate %.1f/s; %d of %d polls saw no growth; the rate read %.2f–%.2f/s over 20-45 s of reads (%d polls), %.2f–%.2f/s over 45-60 s (%d polls; the live sample's first-to-last rate %.2f–%.2f/s)",
			b.f.Name(), b.rate(), tr.still, tr.polls, tr.elo, tr.ehi, tr.early, tr.lo, tr.hi, tr.late, tr.llo, tr.lhi)
		if tr.still*2 < tr.polls {
			t.Errorf("%s: only %d of %d polls saw the total stand still: the writes are not bursts", b.f.Name(), tr.still, tr.polls)
		}
	}
}

// checkBurstRate checks a family's rate at one poll: none with a note until its reads span
// scanner.MinRateSpan, then measured from the reads, within 20% of the true rate, 6% over 45 s.
func checkBurstRate(t *testing.T, f *snapshot.FamilyStats, b burstFamily, st snapshot.Status) {
	t.Helper()
	if b.g == store.Day && (f.HourAvgPerSec != nil || f.HourAvgNote == "") {
		t.Fatalf("%s: hour average %v (note %q), want none and why", f.Family, f.HourAvgPerSec, f.HourAvgNote)
	}
	if f.RatePerSec == nil {
		if f.RateNote == "" {
			t.Fatalf("%s: no rate and no note", f.Family)
		}
		return
	}
	band := 0.20
	if f.RateSpanSec >= 45 {
		band = 0.06
	}
	if f.RateFrom != snapshot.RateFromReads || f.RateSpanSec < scanner.MinRateSpan.Seconds() || f.RateSpanSec > rateSpan.Seconds() ||
		math.Abs(*f.RatePerSec/b.rate()-1) > band {
		t.Fatalf("%s: rate %.2f/s from %q over %.1fs, want %.1f/s ± %.0f%% from reads over %v to %v (live %+v)",
			f.Family, *f.RatePerSec, f.RateFrom, f.RateSpanSec, b.rate(), 100*band, scanner.MinRateSpan, rateSpan, st.LiveFamily(f.Family))
	}
	b2, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b2), `"rate_from":"reads"`) || strings.Contains(string(b2), `"rate_per_sec":null`) {
		t.Fatalf("%s: the JSON says %s", f.Family, b2)
	}
}

// checkOneShot: one sweep (snapshot --json) gives no rate, with the reason, and the day-only
// family no hour average, null with the reason.
func checkOneShot(t *testing.T, rdb redis.UniversalClient, fams []*store.Family) {
	t.Helper()
	snap, err := scanner.Take(t.Context(), rdb, fams, scanner.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(snap.Family("sidekiq_stat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"rate_per_sec":null`, `"rate_note":"one sweep: `, `"hour_avg_per_sec":null`, `"hour_avg_note":"no hour windows`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("one-shot JSON of a day-only family lacks %s: %s", want, b)
		}
	}
	if f := snap.Family("pv"); f.RatePerSec != nil || f.RateNote == "" || f.HourAvgPerSec == nil {
		t.Errorf("one-shot hour family: rate %v (note %q), hour average %v", f.RatePerSec, f.RateNote, f.HourAvgPerSec)
	}
}
