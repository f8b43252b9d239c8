package store

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// queueAt writes one queue per unit the way its writers do: each task scored at its due time in
// the unit (seconds with a fraction, as Python's time.time() and Sidekiq write them; BullMQ's
// ms × 4096 plus a counter).
func queueAt(t *testing.T, rdb *redis.Client, key string, unit ScoreUnit, dues []time.Time) {
	t.Helper()
	for i, due := range dues {
		var score float64
		switch unit {
		case Seconds:
			score = float64(due.UnixMicro()) / 1e6
		case Microseconds:
			score = float64(due.UnixMicro())
		case BullMQScore:
			score = float64(due.UnixMilli()*4096 + int64(i+1))
		default:
			score = float64(due.UnixMicro()) / 1e3
		}
		if err := rdb.ZAdd(t.Context(), key, redis.Z{Score: score, Member: key + ":" + string(rune('a'+i))}).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDelayQueueUnits reads the same schedule written in every unit, configured and found by
// auto: the due split is exact to the millisecond with fractional scores (a task due 300 ms ago
// is due, one due in 400 ms is not), and the lag and next due are times, not score differences.
func TestDelayQueueUnits(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	now := time.Unix(1795000000, 700_000_000) // x.7 s: a task due at x.3 s is due
	dues := []time.Time{now.Add(-90 * time.Second), now.Add(-400 * time.Millisecond), now.Add(300 * time.Millisecond),
		now.Add(20 * time.Minute), now.Add(3 * time.Hour)}
	for _, unit := range []ScoreUnit{Seconds, Milliseconds, Microseconds, BullMQScore} {
		key := "q:" + unit.String()
		queueAt(t, rdb, key, unit, dues)
		for _, read := range []ScoreUnit{unit, AutoUnit} {
			t.Run(key+"/"+read.String(), func(t *testing.T) {
				st, err := DelayQueueStatsOf(t.Context(), rdb, key, "", read, now)
				if err != nil {
					t.Fatal(err)
				}
				if !st.Timed || st.Unit != unit || st.Warning != "" {
					t.Fatalf("unit %v timed %v warning %q, want %v timed", st.Unit, st.Timed, st.Warning, unit)
				}
				if st.Depth != 5 || st.Due != 2 || st.Schedule != [4]int64{1, 0, 1, 1} {
					t.Fatalf("depth %d due %d schedule %v, want 5, 2, [1 0 1 1]", st.Depth, st.Due, st.Schedule)
				}
				if d := st.Lag - 90*time.Second; d < -time.Millisecond || d > time.Millisecond {
					t.Fatalf("lag %v, want 1m30s", st.Lag)
				}
				if d := st.NextIn - 300*time.Millisecond; d < -time.Millisecond || d > time.Millisecond {
					t.Fatalf("next due in %v, want 300ms", st.NextIn)
				}
			})
		}
	}
	t.Run("the clock moved", func(t *testing.T) {
		st, err := DelayQueueStatsOf(t.Context(), rdb, "q:s", "", AutoUnit, now.Add(301*time.Millisecond))
		if err != nil || st.Due != 3 {
			t.Fatalf("due %d (%v) 301 ms later, want 3", st.Due, err)
		}
	})
}

// TestDelayQueueImplausibleUnit reads seconds as milliseconds and BullMQ's scores as plain
// milliseconds: the queue is not given a lag of decades or a next due in centuries, but a
// warning that says which way the scores are off, by how much, and the unit they look like.
func TestDelayQueueImplausibleUnit(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	now := time.Now()
	queueAt(t, rdb, "secs", Seconds, []time.Time{now.Add(-time.Minute), now.Add(time.Minute)})
	queueAt(t, rdb, "bull", BullMQScore, []time.Time{now.Add(time.Minute)})
	rdb.ZAdd(t.Context(), "prio", redis.Z{Score: 3, Member: "x"})
	for _, c := range []struct {
		key  string
		unit ScoreUnit
		want string
	}{
		{"secs", Milliseconds, `score 17`},
		{"secs", Milliseconds, ` read in ms falls 56.`},
		{"secs", Milliseconds, ` years in the past; in s it falls `},
		{"secs", Milliseconds, ` in the past: set score_unit = "s"`},
		{"bull", Milliseconds, ` read in ms falls `},
		{"bull", Milliseconds, ` years in the future; in bullmq it falls `},
		{"bull", Milliseconds, ` in the future: set score_unit = "bullmq"`},
		{"bull", Microseconds, `set score_unit = "bullmq"`},
		{"prio", AutoUnit, "not due times in any unit"},
		{"prio", AutoUnit, "(3 read in s falls 56."},
	} {
		st, err := DelayQueueStatsOf(t.Context(), rdb, c.key, "", c.unit, now)
		if err != nil {
			t.Fatal(err)
		}
		if st.Timed || !strings.Contains(st.Warning, c.want) || st.Due != 0 || st.Lag != 0 || st.NextIn != -1 {
			t.Fatalf("%s as %v: timed %v due %d lag %v next %v warning %q, want untimed with %q",
				c.key, c.unit, st.Timed, st.Due, st.Lag, st.NextIn, st.Warning, c.want)
		}
	}
}

// TestDelayQueueMissingAndInFlight tells a queue that is not there from an empty one, and counts
// a library's in-flight key whatever its type.
func TestDelayQueueMissingAndInFlight(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	st, err := DelayQueueStatsOf(ctx, rdb, "nothing", "", Milliseconds, time.Now())
	if err != nil || !st.Missing || st.Depth != 0 {
		t.Fatalf("a key that is not there: missing %v depth %d (%v)", st.Missing, st.Depth, err)
	}
	queueAt(t, rdb, "q", Milliseconds, []time.Time{time.Now()})
	for typ, write := range map[string]func(string) error{
		"list": func(k string) error { return rdb.RPush(ctx, k, "a", "b").Err() },
		"hash": func(k string) error { return rdb.HSet(ctx, k, "a", "1", "b", "2").Err() },
		"set":  func(k string) error { return rdb.SAdd(ctx, k, "a", "b").Err() },
	} {
		if err := write("q:" + typ); err != nil {
			t.Fatal(err)
		}
		st, err := DelayQueueStatsOf(ctx, rdb, "q", "q:"+typ, AutoUnit, time.Now())
		if err != nil || st.Missing || st.InFlight != 2 {
			t.Fatalf("in-flight %s: %d (%v), want 2", typ, st.InFlight, err)
		}
	}
	rdb.Set(ctx, "q:str", "x", 0)
	if _, err := DelayQueueStatsOf(ctx, rdb, "q", "q:str", AutoUnit, time.Now()); err == nil || !strings.Contains(err.Error(), "string") {
		t.Fatalf("an in-flight string: %v, want an error naming its type", err)
	}
}

func TestParseScoreUnit(t *testing.T) {
	for _, u := range []ScoreUnit{Milliseconds, Seconds, Microseconds, BullMQScore, AutoUnit} {
		if got, err := ParseScoreUnit(u.String()); err != nil || got != u {
			t.Fatalf("%v: %v %v", u, got, err)
		}
	}
	if _, err := ParseScoreUnit("minutes"); err == nil {
		t.Fatal("minutes parsed")
	}
}
