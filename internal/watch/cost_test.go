package watch

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// fillKeys writes n keys of the flow family (each with a TTL) and n/4 keys no entry claims.
func fillKeys(t *testing.T, rdb *redis.Client, f *store.Family, n int) {
	t.Helper()
	pipe := rdb.Pipeline()
	now := time.Now()
	for i := range n {
		pipe.Set(t.Context(), key(t, f, store.Hour, now, fmt.Sprint("app", i), "ios", "10.0.0.1"), i, time.Hour)
		if i%4 == 0 {
			pipe.Set(t.Context(), fmt.Sprint("session:", i), "x", time.Hour)
		}
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// commandStats is INFO commandstats, read on the test's own client.
func commandStats(t *testing.T, rdb *redis.Client) map[string]store.CommandStat {
	t.Helper()
	text, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	return store.ParseCommandStats(text)
}

// spentSince is the usec Redis spent on every command between two readings of commandstats,
// less the first reading's own INFO (the second's is not in it yet), at INFO's mean time a call.
func spentSince(before, after map[string]store.CommandStat) float64 {
	var usec float64
	for name, s := range after {
		usec += float64(s.Usec - before[name].Usec)
	}
	if calls := after["info"].Calls - before["info"].Calls; calls > 0 {
		usec -= float64(after["info"].Usec-before["info"].Usec) / float64(calls)
	}
	return usec
}

// The Redis time the Watcher puts down to its own commands is the time Redis spent on them: on a
// server nobody else calls, its estimate of a poll's time is what commandstats says every command
// took meanwhile (the SCANs, the pipelined PTTLs and MGETs, the samples' and the live reads, its
// INFOs), less the test's own INFO, over six polls. The keys swept a second are the keys the
// first measured poll visited over its interval.
func TestWatcherPutsDownRedisTimeToItsCommands(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t) // the test's own reads, on a client the Watcher does not count
	fams := families(t)
	fillKeys(t, admin, fams[0], 4000)
	w := New(srv.Client(t), fams, scanner.Options{Count: 200, Location: shanghai})
	poll := func() snapshot.Status {
		t.Helper()
		st, err := w.Poll(t.Context(), time.Minute, "") // no budget: each poll sweeps all 5,000 keys
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := poll(); st.Cost.Interval != 0 || st.Cost.ShareKnown {
		t.Fatalf("the first poll has no interval to measure, and says %+v", st.Cost)
	}
	// Over several polls: the test's readings of commandstats fall a little before or after the
	// Watcher's own, and a busy machine makes one poll's commands slower or faster than the
	// next's; the polls between add up what each boundary moves.
	const polls = 6
	before := commandStats(t, admin)
	var est float64
	for i := range polls {
		c := poll().Cost
		if !c.ShareKnown || c.Err != "" || c.Masters != 1 || c.Interval <= 0 {
			t.Fatalf("a poll's cost: %+v", c)
		}
		est += c.Share * c.Interval.Seconds() * 1e6
		// The first interval's rate is its own; later ones are averaged with the earlier.
		if want := 5000 / c.Interval.Seconds(); i == 0 && math.Abs(c.KeysPerSecond-want) > 0.01*want {
			t.Errorf("swept %.0f keys/s; the poll visited 5,000 keys in %v, %.0f keys/s", c.KeysPerSecond, c.Interval, want)
		}
	}
	spent := spentSince(before, commandStats(t, admin))
	t.Logf("estimate %.0f µs of Redis time over %d polls; commandstats: %.0f µs", est, polls, spent)
	if math.Abs(est-spent) > 0.05*spent+500 {
		t.Errorf("the estimate of %d polls' Redis time is %.0f µs; commandstats says their commands took %.0f µs", polls, est, spent)
	}
}

// A user that may not read INFO gets the sweep's rate, and the Redis time unknown with the
// reason; when the right is given back, the Redis time is known again from the next interval.
func TestWatcherSaysWhyRedisTimeIsUnknown(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	fams := families(t)
	fillKeys(t, admin, fams[0], 400)
	setUser := func(rules ...any) {
		t.Helper()
		args := append([]any{"ACL", "SETUSER", "watcher", "reset", "on", ">pw", "~*"}, rules...)
		if err := admin.Do(t.Context(), args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	setUser("+@all", "-info")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "watcher", Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	w := New(rdb, fams, scanner.Options{Count: 100, Location: shanghai})
	poll := func() snapshot.Cost {
		t.Helper()
		st, err := w.Poll(t.Context(), time.Minute, "")
		if err != nil {
			t.Fatal(err)
		}
		return st.Cost
	}
	poll()
	c := poll()
	if c.ShareKnown || !strings.HasPrefix(c.Err, "INFO commandstats refused: ") || c.Interval <= 0 || c.KeysPerSecond <= 0 {
		t.Fatalf("with INFO refused, the cost says %+v", c)
	}
	setUser("+@all")
	poll() // the first reading since the refusal: nothing to take a difference from
	if c := poll(); !c.ShareKnown || c.Share <= 0 || c.Err != "" {
		t.Fatalf("with INFO allowed again, the cost says %+v", c)
	}
}

// On a cluster, the share is each master's own (a share of one core each), and the one shown is
// the master hourglass cost most.
func TestWatcherPutsDownRedisTimePerMaster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	rdb := c.Client(t)
	fams := families(t)
	pipe := rdb.Pipeline()
	for i := range 3000 {
		pipe.Set(t.Context(), key(t, fams[0], store.Hour, time.Now(), fmt.Sprint("app", i), "ios", "10.0.0.1"), i, time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	w := New(rdb, fams, scanner.Options{Count: 100, Location: shanghai})
	var cost snapshot.Cost
	for range 2 {
		st, err := w.Poll(t.Context(), time.Minute, "")
		if err != nil {
			t.Fatal(err)
		}
		cost = st.Cost
	}
	if !cost.ShareKnown || cost.Masters != 3 || cost.Share <= 0 || cost.KeysPerSecond <= 0 {
		t.Fatalf("on a cluster of 3 masters the cost says %+v", cost)
	}
}

// The mean a call is taken over the interval, a subcommand Redis 6 does not list apart is found
// under its command, and counters reset in between give the mean since the reset.
func TestShareOfAnInterval(t *testing.T) {
	stats := func(s string) map[string]cmdStat { return store.ParseCommandStats(s) }
	prev := costReading{at: time.Unix(100, 0), sent: map[string]int64{"scan": 10, "memory|usage": 2},
		stats: stats("# Commandstats\r\ncmdstat_scan:calls=10,usec=10000,usec_per_call=1000.00\r\ncmdstat_memory:calls=2,usec=20\r\ncmdstat_get:calls=10,usec=100\r\n")}
	now := costReading{at: time.Unix(102, 0), sent: map[string]int64{"scan": 30, "memory|usage": 4, "get": 5},
		// 40 SCANs in all over the interval (ours and another client's) took 20,000 µs: 500 µs each.
		stats: stats("cmdstat_scan:calls=50,usec=30000\r\ncmdstat_memory:calls=4,usec=60\r\ncmdstat_get:calls=3,usec=6\r\n")}
	// 20 SCANs at 500 µs, 2 MEMORY USAGE at 20 µs, and 5 GETs at 2 µs (the counters went back:
	// their mean since then), over 2 s.
	want := (20*500.0 + 2*20 + 5*2) / 1e6 / 2
	if got := share(prev, now); math.Abs(got-want) > 1e-12 {
		t.Fatalf("share = %v, want %v", got, want)
	}
	if got := store.CommandStatName([]any{"MEMORY", "USAGE", "k"}); got != "memory|usage" {
		t.Errorf("store.CommandStatName(MEMORY USAGE) = %q", got)
	}
	if got := store.CommandStatName([]any{"evalsha", "abc", 1, "k"}); got != "evalsha" {
		t.Errorf("store.CommandStatName(EVALSHA) = %q", got)
	}
}

// A Redis-time budget paces the sweep at nine tenths of the budget over the cost of a key,
// within keys_per_second, and never below 100 keys a second (nor keys_per_second, when that is
// lower); before a key's cost is measured, it is taken to be 3 µs.
func TestPaceOfARedisTimeBudget(t *testing.T) {
	m := &costMeter{spentUsec: 2500, sweptKeys: 1000} // 2.5 µs a key
	for _, c := range []struct {
		share   float64
		ceiling int
		want    float64
	}{
		{0.01, 20000, 3600}, // nine tenths of 1% of a core at 2.5 µs a key
		{0.01, 1000, 1000},  // keys_per_second binds first
		{0.01, 0, 3600},     // no keys_per_second
		{1e-6, 20000, 100},  // the floor
		{1e-6, 50, 50},      // a keys_per_second under the floor
		{0, 20000, 20000},   // no Redis-time budget
	} {
		if got := m.pace(c.share, c.ceiling); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("pace(%v, %d) = %v, want %v", c.share, c.ceiling, got, c.want)
		}
	}
	if got := (&costMeter{}).pace(0.01, 20000); math.Abs(got-3000) > 1e-6 {
		t.Errorf("before a measure, 1%% paces at %v keys/s, want 3,000 (3 µs a key, aiming at 0.9%%)", got)
	}
	if got := (&costMeter{masters: 3}).pace(0.01, 20000); math.Abs(got-9000) > 1e-6 {
		t.Errorf("before a measure, 1%% of each of 3 masters paces at %v keys/s, want 9,000 (3,000 a master)", got)
	}
}

// A key's cost measured far too high (a burst of the console's own commands, counted against the
// few keys it swept meanwhile) paces the sweep at the floor, where a poll sweeps fewer keys than
// one interval needs to measure a key. The intervals are then added up until they have enough, so
// the pace comes back to what a key really costs within a minute of polls; kept apart, they never
// would.
func TestPaceRecoversFromACostMeasuredTooHigh(t *testing.T) {
	const share, ceiling, slice, keyUsec = 0.008, 20000, 0.5, 2.5 // a poll sweeps half a 1 s refresh
	m := &costMeter{spentUsec: 4.5e6, sweptKeys: 2000}            // 2.25 ms a key
	want := costAim * share / (keyUsec / 1e6)
	if got := m.pace(share, ceiling); got != minPace {
		t.Fatalf("pace after the burst = %v, want the floor %d", got, minPace)
	}
	for poll := 1; poll <= 60; poll++ {
		keys := m.pace(share, ceiling) * slice
		m.fold(keys*keyUsec, keys)
		if got := m.pace(share, ceiling); math.Abs(got-want) <= 0.1*want {
			t.Logf("the pace was back to %.0f keys/s (want %.0f) after %d polls", got, want, poll)
			return
		}
	}
	t.Errorf("after 60 polls the pace is %.0f keys/s, want %.0f: the cost measured too high stuck", m.pace(share, ceiling), want)
}

// Before a key's cost is measured, a cluster's sweep is paced as each master alone would be:
// the budget is a share of each master's core, and the sweep spreads its keys over the masters.
func TestWatcherPacesEachMasterBeforeAMeasure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rdb     func(t *testing.T) redis.UniversalClient
		perPoll float64
	}{
		{"server", func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client(t) }, 2400},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3).Client(t) }, 7200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := New(tc.rdb(t), families(t), scanner.Options{Count: 100, KeysPerSecond: 20000, MaxRedisTime: 0.008, Location: shanghai})
			if _, err := w.Poll(t.Context(), 10*time.Millisecond, ""); err != nil {
				t.Fatal(err)
			}
			// Nine tenths of 0.8% of a core at 3 µs a key: 2,400 keys a second a master.
			if got := w.pace.Load().Rate(); math.Abs(got-tc.perPoll) > 1e-6 {
				t.Fatalf("the first poll paced at %v keys/s, want %v", got, tc.perPoll)
			}
		})
	}
}

// A Watcher held to a share of Redis' time keeps its commands near that share: it measures what
// a key costs and paces the sweep to it, however high keys_per_second is. The tolerance is wide
// (commandstats' time moves with what else the machine runs); without the budget this sweep
// would take Redis' time by the tens of percent.
func TestWatcherHoldsItsRedisTime(t *testing.T) {
	const budget = 0.02
	srv := redistest.Start(t)
	admin := srv.Client(t)
	fams := families(t)
	fillKeys(t, admin, fams[0], 40_000)
	w := New(srv.Client(t), fams, scanner.Options{Count: 100, KeysPerSecond: 1_000_000, MaxRedisTime: budget, Location: shanghai})
	var shares []float64
	for i := range 14 {
		st, err := w.Poll(t.Context(), 250*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if i >= 6 && st.Cost.ShareKnown { // the first polls learn what a key costs
			shares = append(shares, st.Cost.Share)
		}
	}
	var mean float64
	for _, s := range shares {
		mean += s / float64(len(shares))
	}
	t.Logf("Redis time %.2f%% a poll on average (%v); paced at %.0f keys/s", 100*mean, shares, w.pace.Load().Rate())
	if len(shares) < 6 || mean < 0.4*budget || mean > 1.5*budget {
		t.Fatalf("held to %.0f%% of Redis' time, the watcher's commands took %.2f%% (%d polls measured)", 100*budget, 100*mean, len(shares))
	}
}
