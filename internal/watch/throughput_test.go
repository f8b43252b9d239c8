package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TestWatcherMeasuresAsynqsThroughput: while an asynq server processes tasks enqueued at a steady
// pace (one in five failing), the watcher's processed and failed a second follow asynq's own
// running totals (Inspector's ProcessedTotal and FailedTotal read at the same polls), and its
// totals and today's counts are asynq's.
func TestWatcherMeasuresAsynqsThroughput(t *testing.T) {
	srv := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 4, Queues: map[string]int{"work": 1}, LogLevel: asynq.FatalLevel})
	if err := server.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		if task.Type() == "fail" {
			return errors.New("fails")
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go func() { // 40 tasks a second, one in five failing for good
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			typ := "ok"
			if i%5 == 4 {
				typ = "fail"
			}
			client.EnqueueContext(ctx, asynq.NewTask(typ, nil), asynq.Queue("work"), asynq.MaxRetry(0))
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	spec := scanner.JobQueueSpec{Name: "tasks", Source: jobs.Source{Layout: jobs.Asynq}}
	w := New(srv.Client(t), nil, scanner.Options{Location: time.UTC, Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{spec}}})
	type point struct {
		at                time.Time
		processed, failed float64
	}
	var pts []point
	var got *snapshot.JobThroughput
	measuring, unknown := 0, 0 // polls whose row said it was measuring; that said nothing of why
	redistest.Eventually(t, "a rate of the tasks run", 90*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if info, err := insp.GetQueueInfo("work"); err == nil {
			pts = append(pts, point{time.Now(), float64(info.ProcessedTotal), float64(info.FailedTotal)})
		}
		if st.Snapshot == nil || len(st.Snapshot.JobQueues) != 1 {
			return false
		}
		for _, tp := range st.Snapshot.JobQueues[0].Throughput {
			switch m := tp.RateMeasuring; {
			case tp.Queue != "work":
			case tp.ProcessedPerSec != nil && tp.FailedPerSec != nil:
				got = &tp
			case m != nil && m.SpanSec < m.NeedSec && m.NeedSec == scanner.MinRateSpan.Seconds():
				measuring++
			case tp.ProcessedTotal != nil && tp.Error == "":
				unknown++
			}
		}
		return got != nil
	})
	// asynq's own totals over the same reads: their growth a second from the first read within
	// the watcher's minute to the last.
	last := pts[len(pts)-1]
	first := pts[0]
	for _, p := range pts {
		if last.at.Sub(p.at) <= time.Minute {
			first = p
			break
		}
	}
	secs := last.at.Sub(first.at).Seconds()
	wantP, wantF := (last.processed-first.processed)/secs, (last.failed-first.failed)/secs
	t.Logf("watcher: %.2f processed/s, %.2f failed/s; asynq's totals over %.0fs: %.2f, %.2f", *got.ProcessedPerSec, *got.FailedPerSec, secs, wantP, wantF)
	if math.Abs(*got.ProcessedPerSec-wantP) > 0.1*wantP || math.Abs(*got.FailedPerSec-wantF) > 0.2*wantF+0.5 {
		t.Errorf("watcher's rates %.2f and %.2f a second; asynq's totals grew %.2f and %.2f", *got.ProcessedPerSec, *got.FailedPerSec, wantP, wantF)
	}
	if got.ProcessedTotal == nil || *got.ProcessedTotal < int64(first.processed) || len(got.Days) == 0 || got.Days[0].Processed == 0 {
		t.Errorf("totals and days: %+v", got)
	}
	if measuring == 0 || unknown > 0 || got.RateMeasuring != nil {
		t.Errorf("before the rate: %d polls said measuring, %d had a count and no rate with nothing measuring; with it: %+v",
			measuring, unknown, got.RateMeasuring)
	}
}

// TestAKeyOfTheWrongTypeDoesNotStopThePolls: a counter of the library's that holds something else
// (a list where Sidekiq keeps stat:failed, text in stat:processed) is said on the entry's rows,
// naming the key; the watcher's polls go on, and the rest of the snapshot with them.
func TestAKeyOfTheWrongTypeDoesNotStopThePolls(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	if err := rdb.Set(t.Context(), "stat:processed", 40, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(t.Context(), "queues", "default").Err(); err != nil {
		t.Fatal(err)
	}
	pipe := rdb.Pipeline() // a keyspace a sweep takes seconds over, so polls read the totals between sweeps
	for i := range 20_000 {
		pipe.Set(t.Context(), fmt.Sprintf("noise:%05d", i), "v", time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	spec := scanner.JobQueueSpec{Name: "sk", Source: jobs.Source{Layout: jobs.Sidekiq}}
	w := New(rdb, nil, scanner.Options{Location: time.UTC, KeysPerSecond: 5_000, Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{spec}}})
	redistest.Eventually(t, "a complete sweep", 60*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		return st.Snapshot != nil
	})
	for key, write := range map[string]func() error{
		"stat:processed": func() error { return rdb.Set(t.Context(), "stat:processed", "forty", 0).Err() },
		"stat:failed":    func() error { return rdb.RPush(t.Context(), "stat:failed", "x").Err() },
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatalf("%s: the poll failed: %v", key, err)
		}
		e := st.Snapshot.JobQueues[0] // a poll's read says it on the rows; a sweep's on the entry
		said := e.ThroughputNote
		for _, tp := range e.Throughput {
			said += tp.RateNote
		}
		if !strings.Contains(said, "could not be read") || !strings.Contains(said, key) {
			t.Errorf("%s: throughput %+v, note %q; want it said that the key could not be read", key, e.Throughput, e.ThroughputNote)
		}
		if err := rdb.Del(t.Context(), key).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOneBadCounterSpoilsOnlyItsQueue: of two asynq queues whose tasks asynq's own server ran,
// the first's processed counter holding no integer is said on that queue's row alone, naming
// the key, in a snapshot and in a watcher's polls; the other queue keeps asynq's figures.
func TestOneBadCounterSpoilsOnlyItsQueue(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 2, Queues: map[string]int{"alpha": 1, "beta": 1}, LogLevel: asynq.FatalLevel})
	if err := server.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	for _, q := range []string{"alpha", "beta", "beta"} {
		if _, err := client.Enqueue(asynq.NewTask("send", nil), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
	}
	redistest.Eventually(t, "asynq's server to run the three tasks (its own count)", 20*time.Second, func() bool {
		a, err1 := insp.GetQueueInfo("alpha")
		b, err2 := insp.GetQueueInfo("beta")
		return err1 == nil && err2 == nil && a.ProcessedTotal == 1 && b.ProcessedTotal == 2
	})
	bad := "asynq:{alpha}:processed"
	if err := rdb.Set(t.Context(), bad, "lots", 0).Err(); err != nil {
		t.Fatal(err)
	}
	spec := scanner.JobQueueSpec{Name: "tasks", Source: jobs.Source{Layout: jobs.Asynq}}
	check := func(how string, e snapshot.JobQueues) {
		t.Helper()
		rows := map[string]snapshot.JobThroughput{}
		for _, tp := range e.Throughput {
			rows[tp.Queue] = tp
		}
		a, b := rows["alpha"], rows["beta"]
		if a.Error == "" || !strings.Contains(a.Error, bad) || a.ProcessedTotal != nil || !strings.Contains(a.RateNote, "could not be read") {
			t.Errorf("%s: alpha's row %+v; want it unread, naming %s", how, a, bad)
		}
		if b.Error != "" || b.ProcessedTotal == nil || *b.ProcessedTotal != 2 || b.FailedTotal == nil || *b.FailedTotal != 0 {
			t.Errorf("%s: beta's row %+v; want asynq's 2 processed, 0 failed", how, b)
		}
	}
	snap, err := scanner.Take(t.Context(), rdb, nil, scanner.Options{Location: time.UTC, Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{spec}}})
	if err != nil {
		t.Fatal(err)
	}
	check("a snapshot", snap.JobQueues[0])
	if rows := snap.JobQueues[0].Throughput; len(rows) != 2 || len(rows[1].Days) == 0 || rows[1].Days[0].Processed != 2 {
		t.Errorf("rows %+v; want beta's today at 2", rows)
	}

	if err := rdb.Del(t.Context(), bad).Err(); err != nil { // a sweep reads both, then a poll meets the bad key
		t.Fatal(err)
	}
	w := New(rdb, nil, scanner.Options{Location: time.UTC, Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{spec}}})
	redistest.Eventually(t, "a complete sweep", 30*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		return st.Snapshot != nil && len(st.Snapshot.JobQueues[0].Throughput) == 2
	})
	if _, err := w.Poll(t.Context(), 100*time.Millisecond, ""); err != nil { // reads alpha's total, as every poll does
		t.Fatal(err)
	}
	if err := rdb.Set(t.Context(), bad, "lots", 0).Err(); err != nil {
		t.Fatal(err)
	}
	st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
	if err != nil {
		t.Fatalf("the poll failed: %v", err)
	}
	check("a poll", st.Snapshot.JobQueues[0])
}

// TestTodayFollowsTheServersClock: a console left open across UTC midnight shows the new day's
// count as today's before the next sweep completes: once the server's clock is past midnight, a
// poll reads that day's counter (asynq's processed:<date>, written by asynq's own server) and
// the day the sweep read moves back one.
func TestTodayFollowsTheServersClock(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"work": 1}, LogLevel: asynq.FatalLevel})
	if err := server.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	for range 3 {
		if _, err := client.Enqueue(asynq.NewTask("send", nil), asynq.Queue("work")); err != nil {
			t.Fatal(err)
		}
	}
	redistest.Eventually(t, "asynq's server to run the three tasks (its own count)", 20*time.Second, func() bool {
		q, err := insp.GetQueueInfo("work")
		return err == nil && q.ProcessedTotal == 3
	})
	stats, err := insp.History("work", 1) // the day asynq counted them in, by its clock
	if err != nil || len(stats) != 1 || stats[0].Processed != 3 {
		t.Fatalf("asynq's history %+v: %v", stats, err)
	}
	y, m, d := stats[0].Date.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // its midnight
	pipe := rdb.Pipeline()                          // a keyspace a sweep takes seconds over, so polls come between sweeps
	for i := range 20_000 {
		pipe.Set(t.Context(), fmt.Sprintf("noise:%05d", i), "v", time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The server's clock, as the console's store.Clock gives it: the evening before asynq's day,
	// then just past its midnight.
	var clock atomic.Int64
	clock.Store(day.Add(-10 * time.Second).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	spec := scanner.JobQueueSpec{Name: "tasks", Source: jobs.Source{Layout: jobs.Asynq}}
	w := New(rdb, nil, scanner.Options{Location: time.UTC, Now: now, KeysPerSecond: 5_000, Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{spec}}})
	var before snapshot.JobThroughput
	redistest.Eventually(t, "a complete sweep", 60*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Snapshot == nil || len(st.Snapshot.JobQueues[0].Throughput) != 1 {
			return false
		}
		before = st.Snapshot.JobQueues[0].Throughput[0]
		return true
	})
	prev := day.AddDate(0, 0, -1).Format("2006-01-02")
	if len(before.Days) == 0 || before.Days[0].Day != prev || before.Days[0].Processed != 0 {
		t.Fatalf("before midnight, days %+v; want %s first, with nothing run", before.Days, prev)
	}
	clock.Store(day.Add(5 * time.Second).UnixNano())
	st, err := w.Poll(t.Context(), 10*time.Millisecond, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Sweep.Completed {
		t.Fatal("a sweep completed in the poll after midnight: the day would be the sweep's")
	}
	got := st.Snapshot.JobQueues[0].Throughput[0].Days
	if len(got) != len(before.Days) || got[0].Day != day.Format("2006-01-02") || got[0].Processed != 3 || got[1].Day != prev {
		t.Errorf("after midnight, days %+v; want %s first with asynq's 3, then %s", got, day.Format("2006-01-02"), prev)
	}
	if before.Days[0].Day != prev {
		t.Errorf("the sweep's own days were changed in place: %+v", before.Days[:2])
	}
}

// TestPollReadsWhatTheSweepCouldNot: a row the sweep could not read keeps saying why while the
// polls cannot read it either, and shows the counts once a poll has read them.
func TestPollReadsWhatTheSweepCouldNot(t *testing.T) {
	why := "store: key asynq:{a}:processed: not an integer"
	snap := &snapshot.Snapshot{JobQueues: []snapshot.JobQueues{{Name: "tasks", Throughput: []snapshot.JobThroughput{
		{Queue: "a", RawQueue: "a", Days: []snapshot.JobDay{}, Error: why, RateNote: "the counts could not be read: " + why},
		{Queue: "b", RawQueue: "b", Days: []snapshot.JobDay{}, Error: why, RateNote: "the counts could not be read: " + why},
	}}}}
	tt := throughputTracker{series: map[tputKey]*rateSeries{}, read: map[tputKey]int64{}, failed: map[string]string{},
		rowFailed: map[[2]string]string{{"tasks", "b"}: why}, today: map[[2]string]snapshot.JobDay{}}
	at := time.Now()
	for _, q := range []string{"a", "b"} {
		for _, failed := range []bool{false, true} {
			k := tputKey{"tasks", q, failed}
			tt.series[k] = &rateSeries{subject: "the library's count"}
			tt.series[k].add(epoch, at, 5)
			tt.read[k] = 5
		}
	}
	rows := tt.fill(snap, at).JobQueues[0].Throughput
	if a := rows[0]; a.Error != "" || a.ProcessedTotal == nil || *a.ProcessedTotal != 5 || a.FailedTotal == nil || *a.FailedTotal != 5 {
		t.Errorf("a, read by the poll: %+v", a)
	}
	if b := rows[1]; b.Error != why || b.ProcessedTotal != nil || !strings.Contains(b.RateNote, why) {
		t.Errorf("b, unread by the poll too: %+v", b)
	}
	if snap.JobQueues[0].Throughput[0].Error != why {
		t.Error("the sweep's snapshot was changed")
	}
}

// TestARateBeingMeasuredSaysSo: a count read over 12 s so far is measuring, 12 s of the 20 a rate
// needs; one last read two minutes ago is not (its rate is unknown); one read over 30 s has its
// rate and is measuring no more.
func TestARateBeingMeasuredSaysSo(t *testing.T) {
	now := time.Now()
	spans := map[string][2]time.Duration{"young": {12 * time.Second, 0}, "stale": {12 * time.Second, 2 * time.Minute}, "known": {30 * time.Second, 0}}
	snap := &snapshot.Snapshot{JobQueues: []snapshot.JobQueues{{Name: "tasks"}}}
	tt := throughputTracker{series: map[tputKey]*rateSeries{}, read: map[tputKey]int64{}, failed: map[string]string{},
		rowFailed: map[[2]string]string{}, today: map[[2]string]snapshot.JobDay{}}
	for _, q := range []string{"young", "stale", "known"} {
		zero := int64(0)
		snap.JobQueues[0].Throughput = append(snap.JobQueues[0].Throughput, snapshot.JobThroughput{Queue: q, RawQueue: q,
			ProcessedTotal: &zero, FailedTotal: &zero, Days: []snapshot.JobDay{}})
		for _, failed := range []bool{false, true} {
			k := tputKey{"tasks", q, failed}
			tt.series[k] = &rateSeries{subject: "the library's count"}
			last := now.Add(-spans[q][1])
			tt.series[k].add(epoch, last.Add(-spans[q][0]), 100)
			tt.series[k].add(epoch, last, 160)
			tt.read[k] = 160
		}
	}
	rows := tt.fill(snap, now).JobQueues[0].Throughput
	if m := rows[0].RateMeasuring; rows[0].ProcessedPerSec != nil || m == nil || m.SpanSec != 12 || m.NeedSec != 20 {
		t.Errorf("young: rate %v, measuring %+v; want none yet, 12 s of 20", rows[0].ProcessedPerSec, m)
	}
	if rows[1].ProcessedPerSec != nil || rows[1].RateMeasuring != nil || !strings.Contains(rows[1].RateNote, "last read") {
		t.Errorf("stale: %+v; want no rate, not measuring, and why", rows[1])
	}
	if r := rows[2].ProcessedPerSec; r == nil || math.Abs(*r-2) > 1e-9 || rows[2].RateMeasuring != nil {
		t.Errorf("known: rate %v, measuring %+v; want 2 a second (60 over 30 s), measuring no more", r, rows[2].RateMeasuring)
	}
}
