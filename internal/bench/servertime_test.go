package bench

import (
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// TestCommandStatsCountScriptsOnce holds what the attribution relies on, on a real redis-server:
// Redis lists the commands a script runs under their own names too, and a case counts only the
// commands its client sent, so a script's time counts once, with all it does; a name the client
// sends itself as well as from a script counts only the client's share of the calls.
func TestCommandStatsCountScriptsOnce(t *testing.T) {
	srv := redistest.Start(t)
	b := testBencher(t, srv, io.Discard)
	script := redis.NewScript(`redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])`)
	if err := script.Load(b.ctx, b.rdb).Err(); err != nil {
		t.Fatal(err)
	}
	const scripts, direct = 300, 100
	mk := b.meter.start(b.ctx)
	before, err := readCommandStats(b.ctx, b.meter.stats)
	if err != nil {
		t.Fatal(err)
	}
	pipe := b.rdb.Pipeline()
	for i := range scripts {
		pipe.EvalSha(b.ctx, script.Hash(), []string{"k" + strconv.Itoa(i%7)})
	}
	for range direct {
		pipe.Incr(b.ctx, "direct")
	}
	if _, err := pipe.Exec(b.ctx); err != nil {
		t.Fatal(err)
	}
	after, err := readCommandStats(b.ctx, b.meter.stats)
	if err != nil {
		t.Fatal(err)
	}
	// Redis counts the scripts' INCR and GET under their own names, beside the client's INCR.
	if got := after["incr"].Calls - before["incr"].Calls; got != scripts+direct {
		t.Errorf("Redis counted %d INCR calls; want the scripts' %d and the client's %d", got, scripts, direct)
	}
	if got := after["get"].Calls - before["get"].Calls; got != scripts {
		t.Errorf("Redis counted %d GET calls; want the scripts' %d", got, scripts)
	}
	st := b.meter.since(b.ctx, mk, scripts+direct, "call", nil)
	if st == nil {
		t.Fatalf("no server time: %s", b.meter.why)
	}
	if _, ok := st.ByCommand["get"]; ok {
		t.Errorf("the scripts' GET counted beside their EVALSHA: %v", st.ByCommand)
	}
	if st.Calls != scripts+direct || len(st.ByCommand) != 2 {
		t.Errorf("counted %d calls of %v; want %d EVALSHA and INCR", st.Calls, st.ByCommand, scripts+direct)
	}
	// The client's share of INCR's time: its calls over all of them.
	incrUsec := float64(after["incr"].Usec - before["incr"].Usec)
	if want := incrUsec * direct / (scripts + direct); st.ByCommand["incr"] != want {
		t.Errorf("INCR's time counted %v; want %v, the client's share of %v", st.ByCommand["incr"], want, incrUsec)
	}
	evalUsec := float64(after["evalsha"].Usec - before["evalsha"].Usec)
	if st.ByCommand["evalsha"] != evalUsec || evalUsec <= 0 {
		t.Errorf("EVALSHA counted %v µs; Redis says %v", st.ByCommand["evalsha"], evalUsec)
	}
	if st.Usec != st.ByCommand["evalsha"]+st.ByCommand["incr"] || st.UsPer != st.Usec/(scripts+direct) {
		t.Errorf("total %v, %v a call, of %v", st.Usec, st.UsPer, st.ByCommand)
	}
	if st.LongestAtMost == nil || *st.LongestAtMost <= 0 {
		t.Errorf("no longest call from LATENCY HISTOGRAM: %v %s", st.LongestAtMost, st.LongestUnknown)
	}
}

// TestLongestCall checks the longest call's two sources against each other on one slow call: the
// LATENCY HISTOGRAM bound holds SLOWLOG's duration, within its bucket; and the SLOWLOG pass puts
// the server's settings back.
func TestLongestCall(t *testing.T) {
	srv := redistest.Start(t)
	b := testBencher(t, srv, io.Discard)
	stats := b.meter.stats
	for k, v := range map[string]string{"slowlog-log-slower-than": "12345", "slowlog-max-len": "77"} {
		if err := stats.ConfigSet(b.ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A call that keeps Redis busy for a while (a few ms), and quick ones beside it.
	slow := redis.NewScript(`local n = 0 for i = 1, tonumber(ARGV[1]) do n = n + i end return n`)
	if err := slow.Load(b.ctx, b.rdb).Err(); err != nil {
		t.Fatal(err)
	}
	mk := b.meter.start(b.ctx)
	l, err := b.slowlogEvery(func() error {
		for range 50 {
			b.rdb.Incr(b.ctx, "quick")
		}
		return slow.Run(b.ctx, b.rdb, nil, 3_000_000).Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	st := b.meter.since(b.ctx, mk, 1, "pass", nil)
	if l.Us == nil || l.Command != "evalsha" || l.From != "SLOWLOG, every call logged" {
		t.Fatalf("longest %v µs, %q, %q", l.Us, l.Command, l.From)
	}
	// Every call is counted, and the slow one among those over the goal when it is over it.
	if l.Calls == nil || *l.Calls != 51 || l.Over == nil || *l.Over > 51 || (*l.Us > goalSweepLongestUs) != (*l.Over > 0) {
		t.Errorf("%v calls logged, %v over %d µs, the longest %v µs", l.Calls, l.Over, goalSweepLongestUs, *l.Us)
	}
	if st == nil || st.LongestAtMost == nil {
		t.Fatalf("no LATENCY HISTOGRAM bound: %+v", st)
	}
	// The histogram's bucket edges double: the edge above the slow call is at most about twice it.
	if got, d := *st.LongestAtMost, *l.Us; got < d || got > 2.2*d+2 {
		t.Errorf("LATENCY HISTOGRAM bound %v µs for a call SLOWLOG timed at %v µs", got, d)
	}
	for k, want := range map[string]int64{"slowlog-log-slower-than": 12345, "slowlog-max-len": 77} {
		if got, err := configInt(b.ctx, stats, k); err != nil || got != want {
			t.Errorf("%s is %d after the pass (%v); want it put back to %d", k, got, err, want)
		}
	}
	// On a given server bench only reads SLOWLOG, and only calls over its threshold are there.
	b.own = false
	l, err = b.slowlogGiven(func() error { return b.rdb.Incr(b.ctx, "quick").Err() })
	if err != nil || l.Us != nil || l.From != "no call over the server's slowlog-log-slower-than of 12345 µs in its SLOWLOG" {
		t.Errorf("given server: %v µs, %q, %v", l.Us, l.From, err)
	}
}

// TestWriterFreshAndSteady runs the writer's case on fresh keys and again on the same keys, and
// checks that each is what its name says, by the keyspace: on fresh keys every pair creates its
// two keys, on keys there none is created and every one keeps its TTL. Redis' time a pair is
// known and over 0 in both, and is the scripts' alone; which one costs less is for bench to
// report, not for a test on a shared machine to assert.
func TestWriterFreshAndSteady(t *testing.T) {
	srv := redistest.Start(t)
	b := testBencher(t, srv, io.Discard)
	st := store.New(b.rdb, store.Options{Location: time.UTC})
	if err := st.Init(b.ctx); err != nil {
		t.Fatal(err)
	}
	fam, err := store.NewFamily(store.FamilySpec{Name: "bench", Pattern: "{" + store.BenchKey("<ch>:<ad>") + "}:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 2 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// counterKeys counts the counter keys, and those without a TTL.
	counterKeys := func() (n, noTTL int) {
		iter := b.meter.stats.Scan(b.ctx, 0, "{"+store.BenchKey("*"), 1000).Iterator()
		for iter.Next(b.ctx) {
			n++
			if ttl := b.meter.stats.PTTL(b.ctx, iter.Val()).Val(); ttl <= 0 {
				noTTL++
			}
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		return n, noTTL
	}
	const events = 3000
	run := func(c writerCase) rate3 {
		run, err := b.writer(st, fam, events, c)
		if err != nil {
			t.Fatal(err)
		}
		r := b.writerRate(c, []caseRun{run})
		if r.ServerUsPerPair == nil || *r.ServerUsPerPair <= 0 || r.ServerUsPerCall == nil || *r.ServerUsPerCall < *r.ServerUsPerPair {
			t.Errorf("%s: server µs a pair %v, a call %v", c.id, r.ServerUsPerPair, r.ServerUsPerCall)
		}
		stime := b.server[c.id]
		if stime == nil || stime.ByCommand["evalsha"] <= 0 || stime.Calls < int64(events/32) {
			t.Fatalf("%s's server time %+v", c.id, stime)
		}
		for name := range stime.ByCommand { // the scripts, and the writer's SCRIPT LOAD before its first pipeline
			if name != "evalsha" && name != "script|load" {
				t.Errorf("%s's server time holds %s: %v", c.id, name, stime.ByCommand)
			}
		}
		return r
	}
	run(writerPlan[1])
	fresh, noTTL := counterKeys()
	// A pair is two keys; a few of a million draws repeat.
	if fresh < 2*events*99/100 || fresh > 2*events || noTTL != 0 {
		t.Fatalf("fresh keys: %d counter keys, %d without a TTL; want nearly %d, each with its TTL", fresh, noTTL, 2*events)
	}
	run(writerPlan[6])
	if steady, noTTL := counterKeys(); steady != fresh || noTTL != 0 {
		t.Errorf("keys there: %d counter keys after, %d before, %d without a TTL; want none created, each with its TTL", steady, fresh, noTTL)
	}
}
