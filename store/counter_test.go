package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriterTotalsEqualEvents writes many events over many dims through the batch writer and
// checks every hour and day key holds exactly what was added, and the grand totals match.
func TestWriterTotalsEqualEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := adRevenue(t)
		w := s.NewWriter(WriterOptions{KeysPerCall: 16})
		want := map[string]int64{}
		r := rand.New(rand.NewPCG(1, 2))
		at := s.Now() // one instant for every event, so the test cannot straddle an hour
		const events = 20000
		var total int64
		var sent FlushResult
		flush := func() {
			res, err := w.Flush(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			sent.Events += res.Events
			sent.Calls += res.Calls
		}
		for i := range events {
			dims := []string{fmt.Sprintf("ch%d", r.IntN(5)), fmt.Sprintf("ad%d", r.IntN(40))}
			price := int64(r.IntN(100) + 1)
			if err := w.Add(f, dims, price, at); err != nil {
				t.Fatal(err)
			}
			want[dims[0]+":"+dims[1]] += price
			total += price
			if i%6000 == 5999 {
				flush()
			}
		}
		flush()
		if sent.Events != events || w.Pending() != 0 {
			t.Fatalf("flushes wrote %d events, pending %d; want %d and 0", sent.Events, w.Pending(), events)
		}
		var hourSum, daySum int64
		for d, n := range want {
			var ch, ad string
			fmt.Sscanf(d, "%3s:%s", &ch, &ad)
			for _, g := range []Granularity{Hour, Day} {
				v, err := s.Get(t.Context(), f, g, []string{ch, ad}, at)
				if err != nil {
					t.Fatal(err)
				}
				if v.Value != n {
					t.Errorf("%s %s = %d, want %d", g, v.Key, v.Value, n)
				}
				checkTTL(t, b, v.Key, expectedExpiry(g, at), s.Now())
				if g == Hour {
					hourSum += v.Value
				} else {
					daySum += v.Value
				}
			}
		}
		if hourSum != total || daySum != total {
			t.Fatalf("hour total %d, day total %d, want %d", hourSum, daySum, total)
		}
	})
}

// TestExpiryIsWindowAligned checks each key written expires at its window's end plus the
// family's retention, by Incr and by the writer, and that a later writer whose own clock is far
// off (and so would compute "48 h from now" differently) leaves that expiry as it is.
func TestExpiryIsWindowAligned(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := adRevenue(t)
		at := s.Now()
		vals, err := s.Incr(t.Context(), f, []string{"app1", "banner123"}, 7, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != 2 {
			t.Fatalf("got %d values, want hour and day", len(vals))
		}
		for _, v := range vals {
			if v.Value != 7 {
				t.Errorf("%s = %d, want 7", v.Key, v.Value)
			}
			checkTTL(t, b, v.Key, expectedExpiry(v.Window.Granularity, at), s.Now())
		}
		// The key names are what a Java writer with yyyyMMddHH / yyyyMMdd would build.
		local := at.In(shanghai)
		if want := "{app1:banner123}:" + local.Format("2006010215"); vals[0].Key != want {
			t.Errorf("hour key %q, want %q", vals[0].Key, want)
		}
		if want := "{app1:banner123}:" + local.Format("20060102"); vals[1].Key != want {
			t.Errorf("day key %q, want %q", vals[1].Key, want)
		}

		// The writer's keys for a new tuple, and a second writer with a skewed local clock
		// adding to the same keys afterwards.
		w := s.NewWriter(WriterOptions{})
		skewed := newStore(t, b.rdb, Options{LocalClock: func() time.Time { return time.Now().Add(-90 * time.Minute) }})
		w2 := skewed.NewWriter(WriterOptions{})
		for _, wr := range []*Writer{w, w2} {
			if err := wr.Add(f, []string{"app2", "banner9"}, 1, at); err != nil {
				t.Fatal(err)
			}
			if _, err := wr.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for _, g := range []Granularity{Hour, Day} {
			v, err := s.Get(t.Context(), f, g, []string{"app2", "banner9"}, at)
			if err != nil || v.Value != 2 {
				t.Fatalf("%s = %d, %v; want 2", v.Key, v.Value, err)
			}
			checkTTL(t, b, v.Key, expectedExpiry(g, at), s.Now())
		}
	})
}

// expectedExpiry works out, without the code under test, when adRevenue's (and flow's) window of
// granularity g holding at must expire: the end of its Shanghai hour plus 48 hours, or the end
// of its Shanghai day plus 30 days.
func expectedExpiry(g Granularity, at time.Time) time.Time {
	l := at.In(shanghai)
	if g == Hour {
		return time.Date(l.Year(), l.Month(), l.Day(), l.Hour()+1, 0, 0, 0, shanghai).Add(48 * time.Hour)
	}
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, shanghai).Add(30 * 24 * time.Hour)
}

// checkTTL checks key's TTL is expire - now, within 2 seconds.
func checkTTL(t *testing.T, b backend, key string, expire, now time.Time) {
	t.Helper()
	ttl, err := b.rdb.TTL(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl - expire.Sub(now); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("%s TTL %v, want %v ±2s", key, ttl, expire.Sub(now))
	}
}

// TestLostTTLHealsOnNextWrite removes a key's TTL with PERSIST (standing in for a leak: INCR
// after the key's TTL ran out) and checks the next write, through Incr and through the writer,
// gives it back.
func TestLostTTLHealsOnNextWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := flow(t)
		dims := []string{"app123", "device456", "127.0.0.1"}
		at := s.Now()
		vals, err := s.Incr(t.Context(), f, dims, 1, at)
		if err != nil {
			t.Fatal(err)
		}
		key := vals[0].Key
		for _, write := range []string{"incr", "writer"} {
			if err := b.rdb.Persist(t.Context(), key).Err(); err != nil {
				t.Fatal(err)
			}
			if ttl := b.rdb.TTL(t.Context(), key).Val(); ttl != -1 {
				t.Fatalf("after PERSIST TTL = %v, want -1 (no expiry)", ttl)
			}
			if write == "incr" {
				_, err = s.Incr(t.Context(), f, dims, 1, at)
			} else {
				w := s.NewWriter(WriterOptions{})
				if err = w.Add(f, dims, 1, at); err == nil {
					_, err = w.Flush(t.Context())
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			checkTTL(t, b, key, expectedExpiry(Hour, vals[0].Window.Start), s.Now())
		}
		if got := getInt(t, b.rdb, key); got != 3 {
			t.Errorf("%s = %d, want 3", key, got)
		}
	})
}

// TestWindowsFollowServerClock puts the local clock and the server clock hours apart (the
// server's own clock moved on miniredis, the local one skewed both ways) and checks writes
// without an event time land in the server's current hour, not the local or the real one.
func TestWindowsFollowServerClock(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		if b.mini != nil {
			b.mini.SetTime(time.Now().Add(7*time.Hour + 31*time.Minute))
		}
		for _, skew := range []time.Duration{-5 * time.Hour, 3*time.Hour + 17*time.Minute} {
			t.Run(skew.String(), func(t *testing.T) {
				s := newStore(t, b.rdb, Options{LocalClock: func() time.Time { return time.Now().Add(skew) }})
				f := flow(t)
				before, err := b.rdb.Time(t.Context()).Result()
				if err != nil {
					t.Fatal(err)
				}
				vals, err := s.Incr(t.Context(), f, []string{"a", "d", "ip"}, 1, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				after := b.rdb.Time(t.Context()).Val()
				got := vals[0].Key
				ok := false
				for _, at := range []time.Time{before, after} { // the hour may turn between the two
					if got == "flow:count:a:d:ip:"+at.In(shanghai).Format("2006010215") {
						ok = true
					}
				}
				if !ok {
					t.Fatalf("key %q is not the server's hour (server %v, local clock off by %v)", got, before.In(shanghai), skew)
				}
				if d := s.Now().Sub(after); d.Abs() > 2*time.Second {
					t.Errorf("the store's server time is %v off the server's", d)
				}
			})
		}
	})
}

// TestEventTimeLandsInItsHour writes an event two hours old and checks it goes to that hour's
// key (and today's or yesterday's day key), not the current one.
func TestEventTimeLandsInItsHour(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := adRevenue(t)
		at := s.Now().Add(-2 * time.Hour)
		w := s.NewWriter(WriterOptions{})
		for range 3 {
			if err := w.Add(f, []string{"c", "a"}, 5, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		local := at.In(shanghai)
		if got := getInt(t, b.rdb, "{c:a}:"+local.Format("2006010215")); got != 15 {
			t.Errorf("hour two hours ago = %d, want 15", got)
		}
		if got := getInt(t, b.rdb, "{c:a}:"+local.Format("20060102")); got != 15 {
			t.Errorf("its day = %d, want 15", got)
		}
		if n := b.rdb.Exists(t.Context(), "{c:a}:"+s.Now().In(shanghai).Format("2006010215")).Val(); n != 0 {
			t.Errorf("the current hour key exists; the event went to the wrong window")
		}
		// Past every retention: refused, not written and expired at once.
		if err := w.Add(f, []string{"c", "a"}, 1, s.Now().Add(-40*24*time.Hour)); !errors.Is(err, ErrExpired) {
			t.Errorf("event 40 days old: err %v, want ErrExpired", err)
		}
		// Past the hour retention but within the day's: only the day key is written.
		if err := w.Add(f, []string{"c", "old"}, 1, s.Now().Add(-72*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		old := s.Now().Add(-72 * time.Hour).In(shanghai)
		if b.rdb.Exists(t.Context(), "{c:old}:"+old.Format("2006010215")).Val() != 0 {
			t.Errorf("an hour key past its retention was written")
		}
		if got := getInt(t, b.rdb, "{c:old}:"+old.Format("20060102")); got != 1 {
			t.Errorf("day key of an event 72h old = %d, want 1", got)
		}
	})
}

// TestSeries reads the last windows oldest first, with the missing ones as zero.
func TestSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := adRevenue(t)
		now := s.Now()
		w := s.NewWriter(WriterOptions{})
		for h := range 5 {
			if h == 2 {
				continue // a gap
			}
			if err := w.Add(f, []string{"c", "a"}, int64(10+h), now.Add(-time.Duration(h)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		series, err := s.Series(t.Context(), f, Hour, []string{"c", "a"}, 6, now)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{0, 14, 13, 0, 11, 10}
		for i, v := range series {
			if v.Value != want[i] {
				t.Errorf("series[%d] %s = %d, want %d", i, v.Key, v.Value, want[i])
			}
			if i > 0 && !v.Window.Start.Equal(series[i-1].Window.End) {
				t.Errorf("series[%d] starts %v, not where the one before ended", i, v.Window.Start)
			}
		}
	})
}

// TestBadKeysAreTypedErrors puts a list, a non-integer and a near-overflow value where counters
// should be, and checks each path reports a typed error naming the key while good keys are still
// written.
func TestBadKeysAreTypedErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := flow(t)
		ctx := t.Context()
		at := s.Now()
		w := WindowAt(Hour, at, shanghai)
		key := func(app string) string { k, _ := f.Key(w, []string{app, "d", "i"}); return k }
		b.rdb.RPush(ctx, key("list"), "x")
		b.rdb.Set(ctx, key("text"), "12abc", 0)
		b.rdb.Set(ctx, key("big"), "9223372036854775807", 0)

		for _, c := range []struct {
			app  string
			want error
		}{{"list", ErrWrongType}, {"text", ErrNotInteger}, {"big", ErrOverflow}} {
			_, err := s.Incr(ctx, f, []string{c.app, "d", "i"}, 1, at)
			var ke *KeyError
			if !errors.Is(err, c.want) || !errors.As(err, &ke) || ke.Key != key(c.app) {
				t.Errorf("Incr on %s: err %v, want %v naming %q", c.app, err, c.want, key(c.app))
			}
		}

		wr := s.NewWriter(WriterOptions{})
		for _, app := range []string{"list", "good", "text", "big"} {
			if err := wr.Add(f, []string{app, "d", "i"}, 2, at); err != nil {
				t.Fatal(err)
			}
		}
		_, err := wr.Flush(ctx)
		refused := map[string]error{}
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var ke *KeyError
			if !errors.As(e, &ke) {
				t.Fatalf("flush error %v is not a KeyError", e)
			}
			refused[ke.Key] = ke.Err
		}
		for app, want := range map[string]error{"list": ErrWrongType, "text": ErrNotInteger, "big": ErrOverflow} {
			if got := refused[key(app)]; got != want {
				t.Errorf("flush: %s refused with %v, want %v", key(app), got, want)
			}
		}
		if len(refused) != 3 {
			t.Errorf("flush refused %d keys, want 3: %v", len(refused), refused)
		}
		if got := getInt(t, b.rdb, key("good")); got != 2 {
			t.Errorf("the good key in the same call = %d, want 2", got)
		}
		if ttl := b.rdb.TTL(ctx, key("text")).Val(); ttl != -1 {
			t.Errorf("a refused key's TTL was touched: %v", ttl)
		}
		if wr.Pending() != 0 {
			t.Errorf("refused keys are pending again; they can never succeed")
		}

		_, err = s.Get(ctx, f, Hour, []string{"text", "d", "i"}, at)
		var ke *KeyError
		if !errors.Is(err, ErrNotInteger) || !errors.As(err, &ke) || ke.Value != "12abc" {
			t.Errorf("Get on 12abc: %v", err)
		}
		if _, err := s.Get(ctx, f, Hour, []string{"list", "d", "i"}, at); !errors.Is(err, ErrWrongType) {
			t.Errorf("Get on a list: %v", err)
		}
		if _, err := s.Series(ctx, f, Hour, []string{"list", "d", "i"}, 3, at); !errors.Is(err, ErrWrongType) {
			t.Errorf("Series over a list: %v", err)
		}
	})
}

// TestWriterReloadsScriptsAfterFlush empties the script cache after a writer has loaded it, as a
// restart or failover does, and checks the next flush loads it again and writes everything once.
func TestWriterReloadsScriptsAfterFlush(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := flow(t)
		at := s.Now()
		w := s.NewWriter(WriterOptions{})
		add := func(n int) {
			for range n {
				if err := w.Add(f, []string{"a", "d", "i"}, 1, at); err != nil {
					t.Fatal(err)
				}
			}
		}
		add(10)
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := b.rdb.ScriptFlush(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
		if loaded, _ := incrWindows.Exists(t.Context(), b.rdb).Result(); len(loaded) != 1 || loaded[0] {
			t.Fatalf("SCRIPT EXISTS after SCRIPT FLUSH: %v; the test would test nothing", loaded)
		}
		add(5)
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatalf("flush after the script cache was emptied: %v", err)
		}
		v, err := s.Get(t.Context(), f, Hour, []string{"a", "d", "i"}, at)
		if err != nil || v.Value != 15 {
			t.Fatalf("after the reload: %d, %v; want 15", v.Value, err)
		}
	})
}

// TestWriterKeepsWhatItCouldNotSend stops Redis, checks a flush fails and keeps the increments
// pending, then brings Redis back and checks the next flush writes them exactly once.
func TestWriterKeepsWhatItCouldNotSend(t *testing.T) {
	for _, b := range backends(t) {
		if b.real == nil {
			continue
		}
		s := newStore(t, b.rdb, Options{})
		f := adRevenue(t)
		w := s.NewWriter(WriterOptions{})
		b.real.Stop()
		for i := range 100 {
			if err := w.Add(f, []string{"c", fmt.Sprint(i % 7)}, 3, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Flush(t.Context())
		if err == nil || w.Pending() != 7 || res.Events != 0 {
			t.Fatalf("flush with Redis down: %+v, err %v, pending %d; want an error and 7 pending", res, err, w.Pending())
		}
		b.real.Restart(t)
		res, err = w.Flush(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Events != 100 || w.Pending() != 0 {
			t.Fatalf("flush after restart: %+v, pending %d", res, w.Pending())
		}
		var total int64
		for i := range 7 {
			v, err := s.Get(t.Context(), f, Day, []string{"c", fmt.Sprint(i)}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			total += v.Value
		}
		if total != 300 {
			t.Fatalf("day total after retry = %d, want 300", total)
		}
	}
}

// TestWriterPacksKeysPerCall checks pre-aggregation and packing: many events on few dims become
// few keys, and the keys go out in calls of at most KeysPerCall keys.
func TestWriterPacksKeysPerCall(t *testing.T) {
	b := backends(t)[0]
	s := newStore(t, b.rdb, Options{})
	f := adRevenue(t)
	w := s.NewWriter(WriterOptions{KeysPerCall: 8})
	for i := range 1000 {
		if err := w.Add(f, []string{"c", fmt.Sprint(i % 10)}, 1, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Flush(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 1000 || res.Keys != 20 || res.Calls != 3 {
		t.Fatalf("flush %+v: want 1000 events as 20 keys in 3 calls of at most 4 pairs", res)
	}
}

// TestClockFollowsLocalSteps steps the local clock forward and back after the first measure and
// checks the store's idea of the server's time is measured again, not left off by the step.
func TestClockFollowsLocalSteps(t *testing.T) {
	b := backends(t)[1] // TIME from a real server
	var skew atomic.Int64
	// A wall clock that steps: no monotonic reading, as time.Now's would carry.
	local := func() time.Time { return time.Now().Add(time.Duration(skew.Load())).Round(0) }
	s := newStore(t, b.rdb, Options{LocalClock: local, ClockRefresh: time.Minute})
	f := flow(t)
	for _, step := range []time.Duration{3 * time.Hour, -5 * time.Hour} {
		skew.Add(int64(step))
		vals, err := s.Incr(t.Context(), f, []string{"a", "b", "c"}, 1, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		server := b.rdb.Time(t.Context()).Val()
		if d := s.Now().Sub(server); d.Abs() > 2*time.Second {
			t.Fatalf("after a local step of %v the store's server time is off by %v", step, d)
		}
		if !vals[0].Window.Contains(server) && !vals[0].Window.Contains(server.Add(-2*time.Second)) {
			t.Fatalf("after a local step of %v the write went to %s, not the server's hour", step, vals[0].Key)
		}
	}
}
