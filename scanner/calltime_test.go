package scanner

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestTunerFollowsTheTimeOfCalls: COUNT starts at the configured one, drops at once to what fits
// the target when a call's time a unit says the keyspace got costlier, grows back by at most half
// a call, never passes the configured COUNT nor falls under minCount, and is not thrown down by
// one late reply among quick ones. The MGET size follows the reads' time a key the same way.
func TestTunerFollowsTheTimeOfCalls(t *testing.T) {
	tu := newTuner(time.Millisecond, 1000)
	if c := tu.scanCount(); c != 1000 {
		t.Fatalf("first COUNT %d, want the configured 1000", c)
	}
	steps := []struct {
		took time.Duration
		want int
	}{
		{2 * time.Millisecond, 400},               // 2 µs a unit: 0.8 ms fits 400
		{200 * time.Microsecond, 600},             // 0.5 µs a unit fits 1600: grows by half, to 600
		{50 * time.Millisecond, 900},              // one late reply: the recent least (0.5 µs) still rules
		{450 * time.Microsecond, 1000},            // at most the configured COUNT
		{1000 * time.Millisecond, 1000},           // late again, the recent least rules
		{4 * time.Millisecond, 1000},              //
		{4 * time.Millisecond, 1000},              //
		{4 * time.Millisecond, 200},               // four calls at 4 µs a unit: the keyspace is costlier
		{time.Second, 200},                        // 5 ms a unit, but the recent least is 4 µs
		{time.Second, 200},                        //
		{time.Second, 200},                        //
		{time.Second, minCount},                   // four calls of it: at least minCount
		{10 * time.Microsecond, minCount * 3 / 2}, // grows by half a call
	}
	for i, st := range steps {
		count := tu.scanCount()
		tu.scanned(count, st.took)
		if got := tu.scanCount(); got != st.want {
			t.Fatalf("call %d: COUNT %d took %v: next COUNT %d, want %d", i+1, count, st.took, got, st.want)
		}
	}
	if st := tu.stats; st.Scans != int64(len(steps)) || st.CountMax != 1000 || st.CountMin != minCount || st.LongestScan != time.Second {
		t.Errorf("stats %+v", st)
	}
	if small := newTuner(time.Millisecond, 2); small.least != 2 {
		t.Errorf("a configured COUNT of 2 gives a least COUNT of %d, want 2", small.least)
	}

	tu = newTuner(time.Millisecond, 1000)
	for i, st := range []struct {
		keys int
		took time.Duration
		want int
	}{
		{1000, 2 * time.Millisecond, valueChunk}, // 2 µs a key: 400 would fit; at most valueChunk
		{100, 4 * time.Millisecond, valueChunk},  // 40 µs a key, but the recent least is 2 µs
		{100, 4 * time.Millisecond, valueChunk},
		{100, 4 * time.Millisecond, valueChunk},
		{100, 4 * time.Millisecond, 20},  // four pages at 40 µs a key: 0.8 ms fits 20 keys
		{100, 50 * time.Microsecond, 40}, // 0.5 µs a key: by at most twice
		{100, 50 * time.Microsecond, 80},
		{100, 50 * time.Microsecond, valueChunk},
	} {
		tu.read(st.keys, st.took)
		if got := tu.readChunk(); got != st.want {
			t.Fatalf("read %d: %d keys in %v: next MGET size %d, want %d", i+1, st.keys, st.took, got, st.want)
		}
	}
	if tu.stats.ChunkMin != 20 || tu.stats.Reads != 8 || tu.stats.LongestRead != 4*time.Millisecond {
		t.Errorf("stats %+v", tu.stats)
	}
}

// TestCallsKeepToMaxCall sweeps a real server, and a real 3-master cluster, with a MaxCall no
// call can keep to: every master's COUNT drops to minCount after its first SCAN and the reads'
// MGETs to one key, and every key is still read exactly as with the defaults: a counter's value
// and TTL, a key without a TTL, a key of another type.
func TestCallsKeepToMaxCall(t *testing.T) {
	hour := benchHours()[0]
	const n = 3000
	fill := func(t *testing.T, rdb redis.Cmdable) {
		pipe := rdb.Pipeline()
		for i := range n {
			name := counterName(i, hour)
			switch {
			case i == 1234:
				pipe.RPush(t.Context(), name, "not a counter")
			case i%7 == 0:
				pipe.Set(t.Context(), name, i+1, 0)
			default:
				pipe.Set(t.Context(), name, i+1, time.Hour+time.Duration(i)*time.Second)
			}
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, rdb redis.UniversalClient, masters int) {
		s := New(rdb, families(t), Options{Count: 500, MaxCall: time.Nanosecond, Location: shanghai})
		got, seen := collect(t, s)
		if seen < n || len(got) != n {
			t.Fatalf("read %d of %d keys (SCAN returned %d)", len(got), n, seen)
		}
		for i := range n {
			name := counterName(i, hour)
			k := got[name]
			switch {
			case i == 1234:
				if !k.WrongType || k.Gone {
					t.Errorf("%s, a list, read as %+v", name, k)
				}
			case k.Value != strconv.Itoa(i+1):
				t.Errorf("%s value %q, want %d", name, k.Value, i+1)
			case i%7 == 0 && k.TTL != NoTTL:
				t.Errorf("%s TTL %v, want none", name, k.TTL)
			case i%7 != 0 && (k.TTL > time.Hour+time.Duration(i)*time.Second || k.TTL < time.Hour+time.Duration(i-30)*time.Second):
				t.Errorf("%s TTL %v, want %v", name, k.TTL, time.Hour+time.Duration(i)*time.Second)
			}
		}
		c := s.Calls()
		if c.CountMax != 500 || c.CountMin != minCount || c.ChunkMin != 1 {
			t.Errorf("calls %+v: want COUNT from 500 down to %d, and MGETs of one key", c, minCount)
		}
		// Each master's first SCAN asks for 500; every later one for minCount.
		if want := c.CountSum - int64(masters)*500; want != (c.Scans-int64(masters))*minCount {
			t.Errorf("calls %+v: %d masters' SCANs after the first did not all ask for %d", c, masters, minCount)
		}
	}
	t.Run("standalone", func(t *testing.T) {
		rdb := redistest.Start(t).Client(t)
		fill(t, rdb)
		check(t, rdb, 1)
	})
	t.Run("cluster", func(t *testing.T) {
		rdb := redistest.StartCluster(t, 3).Client(t)
		fill(t, rdb)
		check(t, rdb, 3)
	})
}

// TestScanWaitsForTheReads: a master's SCAN is never sent while a pipeline of its reads is under
// way, nor one of its reads during a SCAN, so that each call's round trip is Redis' time of that
// call and not of the sweep's calls queued ahead of it.
func TestScanWaitsForTheReads(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	hour := benchHours()[0]
	pipe := rdb.Pipeline()
	for i := range 20_000 {
		pipe.Set(t.Context(), counterName(i, hour), i, time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	w := &overlapWatch{}
	rdb.AddHook(w)
	s := New(rdb, families(t), Options{Count: 200, Location: shanghai})
	_, seen := collect(t, s)
	w.mu.Lock()
	defer w.mu.Unlock()
	if seen < 20_000 || w.scans < 20_000/200 || w.pipelines < w.scans-1 {
		t.Fatalf("%d keys, %d SCANs, %d read pipelines: the sweep did not run as the test expects", seen, w.scans, w.pipelines)
	}
	if w.overlaps > 0 {
		t.Errorf("%d of %d SCANs and %d read pipelines were sent while another call was under way", w.overlaps, w.scans, w.pipelines)
	}
}

// overlapWatch counts the SCANs and pipelines sent while another was under way.
type overlapWatch struct {
	mu                         sync.Mutex
	open                       int
	scans, pipelines, overlaps int
}

func (w *overlapWatch) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w *overlapWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "scan" {
			return next(ctx, cmd)
		}
		w.mu.Lock()
		w.scans++
		if w.open > 0 {
			w.overlaps++
		}
		w.open++
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.open--
			w.mu.Unlock()
		}()
		return next(ctx, cmd)
	}
}

func (w *overlapWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		w.mu.Lock()
		if w.open > 0 {
			w.overlaps++
		}
		w.open++
		w.pipelines++
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.open--
			w.mu.Unlock()
		}()
		return next(ctx, cmds)
	}
}
