package scanner

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// legacyWorld is a keyspace written the way hand-rolled application writers commonly write it,
// mistakes included, and what it must add up to.
type legacyWorld struct {
	now  time.Time
	fams []*store.Family
	flow *store.Family
	ad   *store.Family

	flowHour                 map[time.Time]int64 // flow totals by hour start
	adHour, adDay            map[time.Time]int64
	flowKeys, adKeys         int64
	noTTL, over, expired, ok int64 // flow and ad together
	wrongType, notInteger    int64
	mismatched, difference   int64
	unmatched                int64
	escapedKey               string // a no-TTL key holding an escape sequence, as Escape shows it
}

func key(t *testing.T, f *store.Family, g store.Granularity, at time.Time, dims ...string) string {
	t.Helper()
	k, err := f.Key(store.WindowAt(g, at, shanghai), dims)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeLegacyWorld writes keys as typical hand-rolled Java writers do, into rdb.
// Writes dated in the past set the TTL their writer set then, less the time gone since. elapse,
// when not nil, moves the server clock on (miniredis's does not move by itself).
func writeLegacyWorld(t *testing.T, ctx context.Context, rdb redis.UniversalClient, now time.Time, elapse func()) *legacyWorld {
	t.Helper()
	fams := families(t)
	w := &legacyWorld{
		now: now, fams: fams, flow: fams[0], ad: fams[1],
		flowHour: map[time.Time]int64{}, adHour: map[time.Time]int64{}, adDay: map[time.Time]int64{},
	}
	hour := func(at time.Time) time.Time { return store.WindowAt(store.Hour, at, shanghai).Start }
	day := func(at time.Time) time.Time { return store.WindowAt(store.Day, at, shanghai).Start }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// INCRBY with the EXPIRE forgotten: no TTL, a leak.
	for i := range 20 {
		k := key(t, w.flow, store.Hour, now, "app1", "ios", fmt.Sprintf("10.0.0.%d", i))
		must(rdb.IncrBy(ctx, k, int64(i+1)).Err())
		w.flowHour[hour(now)] += int64(i + 1)
		w.flowKeys++
		w.noTTL++
	}
	// INCRBY, then EXPIRE on the first write, 48 hours from it: within retention.
	for i := range 30 {
		k := key(t, w.flow, store.Hour, now.Add(-time.Hour), "app2", "android", fmt.Sprintf("10.1.0.%d", i))
		for range 3 {
			n, err := rdb.IncrBy(ctx, k, 5).Result()
			must(err)
			if n == 5 { // written 59 minutes ago, in its own hour
				must(rdb.ExpireAt(ctx, k, now.Add(-59*time.Minute+48*time.Hour)).Err())
			}
		}
		w.flowHour[hour(now.Add(-time.Hour))] += 15
		w.flowKeys++
		w.ok++
	}
	// A writer that keeps hour keys a week: over retention.
	for i := range 4 {
		k := key(t, w.flow, store.Hour, now, "app3", "web", fmt.Sprintf("10.2.0.%d", i))
		must(rdb.IncrBy(ctx, k, 100).Err())
		must(rdb.Expire(ctx, k, 7*24*time.Hour).Err())
		w.flowHour[hour(now)] += 100
		w.flowKeys++
		w.over++
	}
	// SET NX EX then INCR. Once the key expires between the two, INCR makes a key with
	// no TTL. A dim holds an escape sequence, so its example must come out escaped.
	raced := key(t, w.flow, store.Hour, now, "app4\x1b[31m", "ios", "10.3.0.1")
	must(rdb.SetArgs(ctx, raced, "0", redis.SetArgs{Mode: "NX", TTL: time.Millisecond}).Err())
	if elapse != nil {
		elapse()
	}
	waitGone(t, ctx, rdb, raced)
	must(rdb.Incr(ctx, raced).Err())
	w.flowHour[hour(now)]++
	w.flowKeys++
	w.noTTL++
	w.escapedKey = format.Escape(raced)
	// And the same done right: SET NX EX, INCR while it lives.
	fine := key(t, w.flow, store.Hour, now, "app4", "ios", "10.3.0.2")
	must(rdb.SetArgs(ctx, fine, "0", redis.SetArgs{Mode: "NX", TTL: time.Hour}).Err())
	must(rdb.Incr(ctx, fine).Err())
	w.flowHour[hour(now)]++
	w.flowKeys++
	w.ok++
	// Three days old, past the 48h retention: one that still has a day to live, one leaked.
	old := now.Add(-72 * time.Hour)
	k := key(t, w.flow, store.Hour, old, "app5", "ios", "10.4.0.1")
	must(rdb.Set(ctx, k, "7", 24*time.Hour).Err())
	w.flowHour[hour(old)] += 7
	w.flowKeys++
	w.expired++
	k = key(t, w.flow, store.Hour, old, "app5", "ios", "10.4.0.2")
	must(rdb.Set(ctx, k, "9", 0).Err())
	w.flowHour[hour(old)] += 9
	w.flowKeys++
	w.noTTL++
	// The wrong type, and a value INCRBY would refuse.
	k = key(t, w.flow, store.Hour, now, "app6", "ios", "10.5.0.1")
	must(rdb.LPush(ctx, k, "x").Err())
	must(rdb.Expire(ctx, k, time.Hour).Err())
	w.flowKeys++
	w.ok++
	w.wrongType++
	k = key(t, w.flow, store.Hour, now, "app6", "ios", "10.5.0.2")
	must(rdb.Set(ctx, k, "12abc", time.Hour).Err())
	w.flowKeys++
	w.ok++
	w.notInteger++

	// A pipelined batch: INCRBY and EXPIRE the day key, then the hour key, per record,
	// over yesterday's hours and today's first hour.
	yesterday := store.WindowAt(store.Day, now, shanghai).Prev()
	pipe := rdb.Pipeline()
	seenKey := map[string]bool{}
	record := func(at time.Time, channel, ad string, price int64) {
		dk := key(t, w.ad, store.Day, at, channel, ad)
		hk := key(t, w.ad, store.Hour, at, channel, ad)
		pipe.IncrBy(ctx, dk, price)
		pipe.ExpireAt(ctx, dk, at.Add(30*24*time.Hour)) // EXPIRE 30 days, at the time of writing
		pipe.IncrBy(ctx, hk, price)
		pipe.ExpireAt(ctx, hk, at.Add(48*time.Hour))
		w.adDay[day(at)] += price
		w.adHour[hour(at)] += price
		for _, k := range []string{dk, hk} {
			if !seenKey[k] {
				seenKey[k] = true
				w.adKeys++
				w.ok++
			}
		}
	}
	for h := range 24 {
		at := yesterday.Start.Add(time.Duration(h)*time.Hour + 30*time.Minute)
		for ad := range 5 {
			record(at, "baidu", fmt.Sprintf("ad%d", ad), int64(10*(ad+1)+h))
		}
	}
	record(now, "toutiao", "ad9", 1234)
	_, err := pipe.Exec(ctx)
	must(err)
	// A split write gone wrong: the hour incremented, the day write lost, for two ads.
	for i, ad := range []string{"ad1", "ad3"} {
		at := yesterday.Start.Add(time.Duration(5+i)*time.Hour + 30*time.Minute)
		must(rdb.IncrBy(ctx, key(t, w.ad, store.Hour, at, "baidu", ad), int64(40+i)).Err())
		w.adHour[hour(at)] += int64(40 + i)
		w.mismatched++
		w.difference += int64(40 + i)
	}
	// Keys in no family.
	for _, k := range []string{"session:abc", "flow:count:app:dev:ip:notawindow", "{baidu:ad1}:2026"} {
		must(rdb.Set(ctx, k, "1", 0).Err())
		w.unmatched++
	}
	return w
}

func waitGone(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k string) {
	t.Helper()
	redistest.Eventually(t, k+" to expire", 10*time.Second, func() bool { return rdb.Exists(ctx, k).Val() == 0 })
}

func TestSnapshotAddsUpLegacyWrittenKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	w := writeLegacyWorld(t, ctx, rdb, now, nil)

	snap, err := Take(ctx, rdb, w.fams, Options{Count: 7, Location: shanghai,
		Now: func() time.Time { return now }, Examples: 25, Target: "test", Mode: "standalone"})
	if err != nil {
		t.Fatal(err)
	}
	checkLegacySnapshot(t, w, snap)
	if snap.TTLHealth.MemoryNote != "" {
		t.Errorf("memory note on a real redis-server: %s", snap.TTLHealth.MemoryNote)
	}
	if p := snap.TTLHealth.NoTTL; p.Bytes <= 0 || p.Sampled == 0 || p.Examples[0].Bytes <= 0 {
		t.Errorf("no_ttl memory not estimated: %+v", p)
	}
	if got := snap.Family("flow").Health.WrongType.Examples; len(got) != 1 || got[0].Type != "list" {
		t.Errorf("wrong_type example = %+v, want one of type list", got)
	}
}

func TestSnapshotOnMiniredis(t *testing.T) {
	mr := miniredis.RunT(t) // the embedded default
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := t.Context()
	now := time.Now()
	mr.SetTime(now) // miniredis expires keys on its own clock
	w := writeLegacyWorld(t, ctx, rdb, now, func() { mr.FastForward(time.Second) })
	snap, err := Take(ctx, rdb, w.fams, Options{Location: shanghai, Now: func() time.Time { return now }, Examples: 25})
	if err != nil {
		t.Fatal(err)
	}
	checkLegacySnapshot(t, w, snap)
}

func TestSnapshotWithoutMemoryPermission(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	w := writeLegacyWorld(t, ctx, admin, now, nil)
	// A monitoring user that may read and scan, but not run MEMORY.
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">secret", "~*", "+@read", "+scan", "-memory").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "watcher", Password: "secret"})
	t.Cleanup(func() { rdb.Close() })
	snap, err := Take(ctx, rdb, w.fams, Options{Location: shanghai, Now: func() time.Time { return now }, Examples: 25})
	if err != nil {
		t.Fatal(err)
	}
	checkLegacySnapshot(t, w, snap)
	if !strings.Contains(snap.TTLHealth.MemoryNote, "MEMORY USAGE refused: NOPERM") || snap.TTLHealth.NoTTL.Bytes != 0 {
		t.Errorf("memory note %q, bytes %d; want the refusal said and no bytes", snap.TTLHealth.MemoryNote, snap.TTLHealth.NoTTL.Bytes)
	}
	if got := snap.Family("flow").Health.WrongType.Examples; len(got) != 1 || got[0].Type != "list" {
		t.Errorf("wrong_type example = %+v, want its type read still", got)
	}
}

func checkLegacySnapshot(t *testing.T, w *legacyWorld, snap *snapshot.Snapshot) {
	t.Helper()
	if !snap.Scan.Complete {
		t.Error("sweep not complete")
	}
	if want := w.flowKeys + w.adKeys; snap.Scan.KeysMatched != want || snap.Scan.KeysSeen != want+w.unmatched {
		t.Errorf("scan = %+v, want %d matched of %d", snap.Scan, want, want+w.unmatched)
	}
	flow, ad := snap.Family("flow"), snap.Family("ad_revenue")
	if flow == nil || ad == nil {
		t.Fatalf("families missing: %+v", snap.Counters)
	}
	if flow.Keys != w.flowKeys || ad.Keys != w.adKeys {
		t.Errorf("keys flow=%d ad=%d, want %d and %d", flow.Keys, ad.Keys, w.flowKeys, w.adKeys)
	}
	checkTotals := func(f *snapshot.FamilyStats, g string, want map[time.Time]int64) {
		t.Helper()
		n := 0
		for _, ws := range f.Windows {
			if ws.Granularity != g {
				continue
			}
			n++
			if ws.Total != want[ws.Start] {
				t.Errorf("%s %s %s total = %d, want %d", f.Family, g, ws.Window, ws.Total, want[ws.Start])
			}
		}
		if n != len(want) {
			t.Errorf("%s: %d %s windows, want %d", f.Family, n, g, len(want))
		}
	}
	checkTotals(flow, "hour", w.flowHour)
	checkTotals(ad, "hour", w.adHour)
	checkTotals(ad, "day", w.adDay)

	ttl := flow.TTL
	ttl.OK += ad.TTL.OK
	ttl.NoTTL += ad.TTL.NoTTL
	ttl.OverRetention += ad.TTL.OverRetention
	ttl.ExpiredButPresent += ad.TTL.ExpiredButPresent
	if want := (snapshot.TTLCounts{OK: w.ok, NoTTL: w.noTTL, OverRetention: w.over, ExpiredButPresent: w.expired}); ttl != want {
		t.Errorf("ttl = %+v, want %+v", ttl, want)
	}
	h := snap.TTLHealth
	if h.NoTTL.Keys != w.noTTL || h.OverRetention.Keys != w.over || h.ExpiredButPresent.Keys != w.expired ||
		h.WrongType.Keys != w.wrongType || h.NotInteger.Keys != w.notInteger {
		t.Errorf("ttl_health = %+v", h)
	}
	if flow.WrongType != w.wrongType || flow.NotInteger != w.notInteger {
		t.Errorf("flow wrong_type=%d not_integer=%d", flow.WrongType, flow.NotInteger)
	}
	found := false
	for _, ex := range flow.Health.NoTTL.Examples {
		if strings.ContainsRune(ex.Key, 0x1b) {
			t.Errorf("example key holds a raw escape: %q", ex.Key)
		}
		found = found || ex.Key == w.escapedKey
	}
	if !found || !strings.Contains(w.escapedKey, `\x1b[31m`) {
		t.Errorf("no_ttl examples %+v lack %q", flow.Health.NoTTL.Examples, w.escapedKey)
	}
	if got := flow.Health.NotInteger.Examples; len(got) != 1 || got[0].Value != "12abc" {
		t.Errorf("not_integer examples = %+v", got)
	}

	// The current hour: its series point, its top dims, its average rate.
	cur := store.WindowAt(store.Hour, w.now, shanghai).Start
	if got := flow.Series.Hours; len(got) != snapshot.SeriesHours || got[snapshot.SeriesHours-1] != w.flowHour[cur] ||
		got[snapshot.SeriesHours-2] != w.flowHour[cur.Add(-time.Hour)] {
		t.Errorf("flow hour series ends %v, want …%d %d", got[len(got)-2:], w.flowHour[cur.Add(-time.Hour)], w.flowHour[cur])
	}
	if len(ad.Series.Days) != snapshot.SeriesDays || ad.Series.Days[snapshot.SeriesDays-2] != w.adDay[store.WindowAt(store.Day, w.now, shanghai).Prev().Start] {
		t.Errorf("ad day series = %v", ad.Series.Days)
	}
	cw := flow.CurrentWindow("hour")
	if cw == nil || len(cw.Top) != 5 || cw.Top[0].Value != 100 || cw.Top[4].Value != 20 {
		t.Errorf("current flow hour top = %+v, want the four 100s then 20", cw)
	}
	if el := w.now.Sub(cur).Seconds(); el >= 1 {
		if want := float64(w.flowHour[cur]) / el; hourAvg(flow) != want {
			t.Errorf("hour_avg_per_sec = %v, want %v", hourAvg(flow), want)
		}
	}
	old := flow.Window("hour", store.WindowAt(store.Hour, w.now.Add(-72*time.Hour), shanghai).Start)
	if old == nil || !old.Expired || len(old.Top) != 0 {
		t.Errorf("a window past retention = %+v, want expired, no top", old)
	}

	// Reconciliation: yesterday, every ad, two of them off.
	r := ad.Reconciliation
	if r == nil || r.Days != 1 || r.Dims != 5 || r.Mismatched != w.mismatched || r.Difference != w.difference || r.Sampled != 1 {
		t.Fatalf("reconciliation = %+v, want 1 day, 5 dims, %d off by %d", r, w.mismatched, w.difference)
	}
	if ad.MismatchedDims != w.mismatched || len(r.Examples) != 2 || r.Examples[0].Dims["ad"] != "ad3" ||
		r.Examples[0].Hours-r.Examples[0].DayValue != 41 {
		t.Errorf("mismatch examples = %+v", r.Examples)
	}
	if flow.Reconciliation != nil {
		t.Error("an hour-only family has no reconciliation")
	}

	// The JSON carries the documented names.
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"taken_at"`, `"keys_seen"`, `"keys_matched"`, `"duration_ms"`, `"complete"`,
		`"counters"`, `"granularity"`, `"expired_but_present"`, `"over_retention"`, `"no_ttl"`, `"wrong_type"`,
		`"not_integer"`, `"mismatched_dims"`, `"ttl_health"`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("JSON lacks %s", name)
		}
	}
}

func TestRateBetweenSnapshots(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := t.Context()
	fams := families(t)
	flow := fams[0]
	// Just before an hour ends, and 25 seconds later, in the next hour.
	t0 := store.WindowAt(store.Hour, time.Now(), shanghai).Start.Add(-5 * time.Second)
	t1 := t0.Add(25 * time.Second)
	take := func(at time.Time) *snapshot.Snapshot {
		snap, err := Take(ctx, rdb, fams, Options{Location: shanghai, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	k0 := key(t, flow, store.Hour, t0, "a", "b", "c")
	rdb.IncrBy(ctx, k0, 100)
	s0 := take(t0)
	rdb.IncrBy(ctx, k0, 30) // late into the old hour
	rdb.IncrBy(ctx, key(t, flow, store.Hour, t1, "a", "b", "c"), 70)
	s1 := take(t1)
	if f := s1.Family("flow"); f.RatePerSec != nil || !strings.HasPrefix(f.RateNote, "one sweep: ") {
		t.Errorf("one sweep's rate %v, note %q; want none, and why", f.RatePerSec, f.RateNote)
	}
	SetRate(s1, s0)
	if f := s1.Family("flow"); f.RatePerSec == nil || *f.RatePerSec != 4 || f.RateFrom != snapshot.RateFromSweeps || f.RateSpanSec != 25 || f.RateNote != "" {
		t.Errorf("rate = %v from %q over %vs (note %q), want (30+70)/25s = 4 from sweeps over 25s", f.RatePerSec, f.RateFrom, f.RateSpanSec, f.RateNote)
	}
	if s0.Family("flow").RatePerSec != nil {
		t.Error("a first snapshot has no rate")
	}
	// Sweeps closer than MinRateSpan give none: a bursty writer's growth between them is a burst
	// or nothing.
	s2 := take(t1.Add(5 * time.Second))
	SetRate(s2, s1)
	if f := s2.Family("flow"); f.RatePerSec != nil || !strings.Contains(f.RateNote, "a rate needs 20s") {
		t.Errorf("rate of sweeps 5s apart %v, note %q; want none, and why", f.RatePerSec, f.RateNote)
	}
}

func TestReconcilerHoldsItsCap(t *testing.T) {
	fams := families(t)
	ad := fams[1]
	now := time.Now()
	yesterday := store.WindowAt(store.Day, now, shanghai).Prev()
	a := NewAggregator(fams, Options{Now: func() time.Time { return now }, Location: shanghai, ReconcileTuples: 1000})
	const tuples = 20000
	var page Page
	for i := range tuples {
		dims := []string{"c", fmt.Sprint(i)}
		hour := store.WindowAt(store.Hour, yesterday.Start.Add(3*time.Hour), shanghai)
		dayVal := "10"
		if i%10 == 0 {
			dayVal = "11" // one in ten disagrees by one
		}
		page.Keys = append(page.Keys,
			Key{Name: "h", Classified: store.Classified{Family: ad, Window: hour, Dims: dims}, TTL: time.Hour, Value: "10"},
			Key{Name: "d", Classified: store.Classified{Family: ad, Window: yesterday, Dims: dims}, TTL: time.Hour, Value: dayVal})
		if len(page.Keys) >= 1000 {
			a.Add(page)
			page = Page{}
			if n := len(a.fams[ad].recon.pairs); n > 1000 {
				t.Fatalf("reconciler holds %d pairs, cap 1000", n)
			}
		}
	}
	a.Add(page)
	r := a.Snapshot(true).Family("ad_revenue").Reconciliation
	if r.Sampled >= 1 || r.Sampled < 1.0/64 {
		t.Fatalf("sampled = %v, want a share below 1", r.Sampled)
	}
	// The estimates are within a few standard deviations of the truth.
	if r.Dims < tuples/2 || r.Dims > tuples*2 || r.Mismatched < tuples/10/3 || r.Mismatched > tuples/10*3 {
		t.Errorf("estimates dims=%d mismatched=%d, want about %d and %d", r.Dims, r.Mismatched, tuples, tuples/10)
	}
}

func TestParseInteger(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "-1": -1, "42": 42, "9223372036854775807": 1<<63 - 1,
		"-9223372036854775808": -1 << 63} {
		if got, ok := ParseInteger(s); !ok || got != want {
			t.Errorf("ParseInteger(%q) = %d, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "-", "+5", "05", "-0", " 5", "5 ", "5.0", "12abc", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999"} {
		if _, ok := ParseInteger(s); ok {
			t.Errorf("ParseInteger(%q) accepted", s)
		}
	}
}

// TestSweepOf200kKeysIsBoundedAndBudgeted sweeps 200k family keys at a budget: what the sweep
// holds stays far below what keeping the keys would take, and it takes at least as long as the
// budget allows.
func TestSweepOf200kKeysIsBoundedAndBudgeted(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200k keys")
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	fams := families(t)
	now := time.Now()
	const n = 200_000
	for start := 0; start < n; start += 10_000 {
		pipe := rdb.Pipeline()
		for i := start; i < start+10_000; i++ {
			at := now.Add(-time.Duration(i%30) * time.Hour)
			var k string
			if i%2 == 0 {
				k = key(t, fams[0], store.Hour, at, fmt.Sprint("app", i%13), fmt.Sprint("dev", i), "10.0.0.1")
			} else {
				g := store.Hour
				if i%3 == 0 {
					g = store.Day
				}
				k = key(t, fams[1], g, at, "ch", fmt.Sprint("ad", i))
			}
			pipe.Set(ctx, k, i, 48*time.Hour)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	const budget = 100_000 // keys a second
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := live()
	var peak uint64
	s := New(rdb, fams, Options{Count: 1000, KeysPerSecond: budget, Location: shanghai})
	a := NewAggregator(fams, Options{Location: shanghai, ReconcileTuples: 10_000})
	pages := 0
	start := time.Now()
	err := s.Run(ctx, func(p Page) {
		a.Add(p)
		if pages++; pages%40 == 0 {
			peak = max(peak, live())
		}
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	a.AddReads(s.Finish(ctx, a.Wants()))
	snap := a.Snapshot(s.Done())
	peak = max(peak, live())
	if snap.Scan.KeysSeen != n || snap.Scan.KeysMatched != n {
		t.Fatalf("scan = %+v, want all %d keys seen and matched", snap.Scan, n)
	}
	// Holding the keys would take 200k names and structs: tens of MB. The sweep holds pages in
	// flight, windows, top lists and at most 10k reconciliation pairs.
	const bound = 12 << 20
	if grew := int64(peak) - int64(base); grew > bound {
		t.Errorf("live heap grew %d MB during the sweep, bound %d MB", grew>>20, bound>>20)
	}
	if pairs := len(a.fams[fams[1]].recon.pairs); pairs > 10_000 {
		t.Errorf("reconciliation holds %d pairs, cap 10000", pairs)
	}
	// The first page is free; every key after it is paid for at the budget.
	if minimum := time.Duration(float64(n-2000) / budget * float64(time.Second)); elapsed < minimum {
		t.Errorf("swept %d keys in %v, faster than the budget of %d/s allows (%v)", n, elapsed, budget, minimum)
	}
	t.Logf("%d keys in %v (budget %d/s); live heap grew %d KB", n, elapsed.Round(time.Millisecond), budget, (int64(peak)-int64(base))>>10)
}

// TestSnapshotOnACluster writes the legacy world across a 3-master cluster: the snapshot, merged
// from every master's sweep, adds up exactly as on one server.
func TestSnapshotOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	ctx := t.Context()
	now := time.Now()
	w := writeLegacyWorld(t, ctx, rdb, now, nil)
	snap, err := Take(ctx, rdb, w.fams, Options{Count: 10, Location: shanghai,
		Now: func() time.Time { return now }, Examples: 25, Mode: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	checkLegacySnapshot(t, w, snap)
	if snap.TTLHealth.MemoryNote != "" || snap.TTLHealth.NoTTL.Bytes <= 0 {
		t.Errorf("memory on a cluster: note %q, bytes %d", snap.TTLHealth.MemoryNote, snap.TTLHealth.NoTTL.Bytes)
	}
	// Every master's share, adding up to the whole, each with keys of its own.
	var sum int64
	for _, m := range snap.Scan.Masters {
		sum += m.KeysSeen
		if m.KeysSeen == 0 {
			t.Errorf("master %s saw no key", m.Addr)
		}
	}
	if len(snap.Scan.Masters) != 3 || sum != snap.Scan.KeysSeen {
		t.Errorf("masters %+v add up to %d of %d", snap.Scan.Masters, sum, snap.Scan.KeysSeen)
	}
}
