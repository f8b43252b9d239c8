package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// searchAll runs a whole search and returns the matches' IDs (or entries, where a task has no
// ID) in the order found, and the progress at its end.
func searchAll(t *testing.T, rdb redis.Cmdable, q Queue, secs []TaskSection, query string, opt SearchOptions) ([]string, SearchProgress) {
	t.Helper()
	m, err := ParseMatch(query)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	prog, err := Search(t.Context(), rdb, q, secs, m, opt, func(found []Found, _ SearchProgress) {
		for _, f := range found {
			if f.Task.ID != "" {
				got = append(got, f.Task.ID)
			} else {
				got = append(got, f.Task.Member)
			}
		}
	})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	return got, prog
}

// TestSearchSidekiqHundredThousand: of 100,000 jobs Sidekiq's own push_bulk wrote (half waiting,
// half scheduled), a search by JSON field and one by substring find exactly the planted jobs,
// testing every job once, within the keys-per-second budget as Redis counts the reads; a search
// whose context ends stops within a second.
func TestSearchSidekiqHundredThousand(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	planted := []int{3, 999, 1000, 45_678, 77_777, 99_999}
	var rep struct{ Planted []string }
	places := fmt.Sprint(planted[0])
	for _, p := range planted[1:] {
		places += "," + fmt.Sprint(p)
	}
	redistest.RunFixture(t, ruby, "testdata/sidekiq", &rep, "many.rb", "redis://"+srv.Addr+"/0", "bulk", "100000", places)
	src := Source{Layout: Sidekiq}
	waiting, shared := src.Queue("bulk"), src.SharedQueue()
	want := slices.Sorted(slices.Values(rep.Planted))
	if n := rdb.LLen(t.Context(), "queue:bulk").Val() + rdb.ZCard(t.Context(), "schedule").Val(); n != 100_000 || len(want) != len(planted) {
		t.Fatalf("Sidekiq wrote %d jobs, planted %v", n, rep.Planted)
	}

	const rate = 200_000
	before := commandCalls(t, rdb)
	start := time.Now()
	opt := SearchOptions{KeysPerSecond: rate}
	got, prog := searchAll(t, rdb, waiting, []TaskSection{SectionWaiting}, "args.0.user_id=42", opt)
	later, p := searchAll(t, rdb, shared, []TaskSection{SectionLater}, "args.0.user_id=42", opt)
	got, prog.Scanned, prog.Keys = append(got, later...), prog.Scanned+p.Scanned, prog.Keys+p.Keys
	elapsed := time.Since(start)
	slices.Sort(got)
	if !slices.Equal(got, want) || prog.Scanned != 100_000 {
		t.Fatalf("the field search found %v over %d tasks, want %v over 100,000", got, prog.Scanned, want)
	}
	after := commandCalls(t, rdb)
	reads := (after["lrange"] - before["lrange"] + after["zrange"] - before["zrange"]) * int64(MaxTaskPage)
	if reads < 100_000 || prog.Keys < 100_000 {
		t.Fatalf("Redis ran LRANGE and ZRANGE windows for %d tasks, the search charged %d keys", reads, prog.Keys)
	}
	// The budget: what was read fits the rate over the time taken, but for the first page.
	if limit := float64(rate)*elapsed.Seconds() + float64(MaxTaskPage+1); float64(prog.Keys) > limit*1.01 {
		t.Errorf("%d keys in %v: over the budget of %d keys a second", prog.Keys, elapsed, rate)
	}
	t.Logf("100,000 tasks: %d keys in %v (%.0f keys/s, budget %d)", prog.Keys, elapsed, float64(prog.Keys)/elapsed.Seconds(), rate)

	ids, p := searchAll(t, rdb, shared, []TaskSection{SectionLater}, "needle-7f3", SearchOptions{})
	ids2, p2 := searchAll(t, rdb, waiting, []TaskSection{SectionWaiting}, "needle-7f3", SearchOptions{})
	got = slices.Sorted(slices.Values(append(ids, ids2...)))
	if !slices.Equal(got, want) || p.Scanned+p2.Scanned != 100_000 || p.NotJSON+p2.NotJSON != 0 {
		t.Errorf("the substring search found %v (%+v %+v), want %v", got, p, p2, want)
	}

	// A slow search (2,000 keys a second: 50 s for the queue) stops once its context ends.
	ctx, cancel := context.WithCancel(t.Context())
	m, _ := ParseMatch("needle-7f3")
	done := make(chan error, 1)
	pages := make(chan struct{}, 100)
	go func() {
		_, err := Search(ctx, rdb, waiting, []TaskSection{SectionWaiting}, m, SearchOptions{KeysPerSecond: 2000},
			func([]Found, SearchProgress) { pages <- struct{}{} })
		done <- err
	}()
	<-pages
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled search ended with %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a cancelled search was still running a second later")
	}
}

// TestSearchBullMQAndRQ: jobs BullMQ's addBulk and RQ's enqueue wrote are found by a field of
// their data (BullMQ: data.email, in the waiting and the delayed jobs) and by a substring of
// their description (RQ), exactly those, every job tested once.
func TestSearchBullMQAndRQ(t *testing.T) {
	t.Run("BullMQ", func(t *testing.T) {
		node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		var rep struct {
			Delayed []string
			Counts  map[string]int64
		}
		redistest.RunFixture(t, node, redistest.NodeDir(), &rep, "bullmq_search.mjs", "redis://"+srv.Addr, "mail", "3000")
		q := Source{Layout: BullMQ}.Queue("mail")
		got, prog := searchAll(t, rdb, q, q.Sections(), "data.email=user1001@example.com", SearchOptions{KeysPerSecond: 50_000})
		if !slices.Equal(got, []string{"j1001"}) || prog.Scanned != 3000 || prog.NotJSON != 0 {
			t.Errorf("data.email found %v (%+v), want j1001 of 3,000", got, prog)
		}
		got, _ = searchAll(t, rdb, q, q.Sections(), "data.n=970", SearchOptions{})
		if !slices.Equal(got, []string{"j970"}) || !slices.Contains(rep.Delayed, "j970") {
			t.Errorf("a delayed job by data.n: %v", got)
		}
		got, _ = searchAll(t, rdb, q, []TaskSection{SectionLater}, "@example.com", SearchOptions{})
		slices.Sort(got)
		slices.Sort(rep.Delayed)
		if !slices.Equal(got, rep.Delayed) {
			t.Errorf("the delayed jobs by substring: %d found, BullMQ delayed %d", len(got), len(rep.Delayed))
		}
	})
	t.Run("RQ", func(t *testing.T) {
		py := redistest.Interpreter(t, "python3", "rq")
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		var rep struct {
			IDs   map[string]string
			Count int64
		}
		redistest.RunFixture(t, py, "testdata/rq", &rep, "search.py", "redis://"+srv.Addr+"/0", "work", "1000")
		q := Source{Layout: RQ}.Queue("work")
		got, prog := searchAll(t, rdb, q, q.Sections(), "'user-77'", SearchOptions{})
		if !slices.Equal(got, []string{rep.IDs["user-77"]}) || prog.Scanned != rep.Count {
			t.Errorf("RQ 'user-77' found %v over %d, want %s over %d", got, prog.Scanned, rep.IDs["user-77"], rep.Count)
		}
		got, prog = searchAll(t, rdb, q, q.Sections(), "args.0=user-7", SearchOptions{})
		if len(got) != 0 || prog.NotJSON != rep.Count {
			t.Errorf("a field search on RQ's descriptions: %v, %d not JSON of %d", got, prog.NotJSON, rep.Count)
		}
	})
}

// TestSearchOnAMovingQueue: between the search's pages, a worker takes more than a page of tasks
// from the head of the list and producers add to its tail, and tasks due earlier than those read
// are added to a delay queue; every planted task that stays throughout is found at least once.
func TestSearchOnAMovingQueue(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	const n = 20_000
	var batch []any
	for i := range n {
		task := fmt.Sprintf(`{"n":%d}`, i)
		if i >= n/2 && i%1000 == 7 {
			task = fmt.Sprintf(`{"n":%d,"needle":true}`, i)
		}
		batch = append(batch, task)
	}
	// LPUSH: the first pushed is at the tail, taken first (RPOP), listed first.
	if err := rdb.LPush(ctx, "lq:live", batch...).Err(); err != nil {
		t.Fatal(err)
	}
	m, _ := ParseMatch("needle=true")
	var got []string
	pages := 0
	_, err := pageByPage(t, NewSearcher(ListQueueOf("lq:live", ""), []TaskSection{SectionWaiting}, m, SearchOptions{PageSize: 100}), rdb,
		func(found []Found) {
			for _, f := range found {
				got = append(got, f.Task.Member)
			}
			if pages++; pages < 40 {
				rdb.RPopCount(ctx, "lq:live", 250)          // a worker takes 250, more than a page
				rdb.LPush(ctx, "lq:live", `{"n":-1}`, `{}`) // producers add at the tail
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(got))); len(distinct) != 10 {
		t.Errorf("found %d distinct planted tasks of 10 on a list consumed under the search: %v", len(distinct), got)
	}

	// A delay queue: tasks due before the search's place are added between pages, more than a
	// page at a time, so the search loses its place and goes on from the head.
	now := time.Now()
	var zs []redis.Z
	for i := range 5000 {
		member := fmt.Sprintf(`{"n":%d}`, i)
		if i%500 == 3 {
			member = fmt.Sprintf(`{"n":%d,"needle":true}`, i)
		}
		zs = append(zs, redis.Z{Score: float64(now.Add(-time.Hour).UnixMilli() + int64(i)), Member: member})
	}
	rdb.ZAdd(ctx, "dq:live", zs...)
	got, pages = nil, 0
	prog, err := pageByPage(t, NewSearcher(DelayQueueOf("dq:live", "", store.Milliseconds), []TaskSection{SectionDue}, m, SearchOptions{PageSize: 100}), rdb,
		func(found []Found) {
			for _, f := range found {
				got = append(got, f.Task.Member)
			}
			if pages++; pages == 10 {
				var early []redis.Z
				for i := range 300 {
					early = append(early, redis.Z{Score: float64(now.Add(-2*time.Hour).UnixMilli() + int64(i)), Member: fmt.Sprint("early-", i)})
				}
				rdb.ZAdd(ctx, "dq:live", early...)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(got)))
	if len(distinct) != 10 || prog.Restarts == 0 {
		t.Errorf("found %d distinct planted tasks of 10 on a delay queue added to under the search (%d restarts)", len(distinct), prog.Restarts)
	}
}

// pageByPage runs s a page a step, calling between after each.
func pageByPage(t *testing.T, s *Searcher, rdb redis.Cmdable, between func([]Found)) (SearchProgress, error) {
	for !s.Progress().Done {
		found, _, err := s.Step(t.Context(), rdb, 0)
		if err != nil {
			return s.Progress(), err
		}
		between(found)
	}
	return s.Progress(), nil
}

// TestParseMatch reads field and substring searches.
func TestParseMatch(t *testing.T) {
	for _, c := range []struct {
		in, payload string
		field, hit  bool
	}{
		{"args.0.user_id=42", `{"args":[{"user_id":42}]}`, true, true},
		{"args.0.user_id=42", `{"args":[{"user_id":42.0}]}`, true, true},
		{"args.0.user_id=42", `{"args":[{"user_id":"42"}]}`, true, true},
		{"args.0.user_id=42", `{"args":[{"user_id":421}]}`, true, false},
		{"data.email=a@b", `mail {"email":"a@b"}`, true, true},
		{"data.ok=true", `t {"ok":true}`, true, true},
		{"args=[1,2]", `{"args":[1, 2]}`, true, true},
		{`"a=b"`, `x a=b y`, false, true},
		{"user 42", `{"note":"user 42"}`, false, true},
	} {
		m, err := ParseMatch(c.in)
		if err != nil || m.Field() != c.field || (m.test(Task{Payload: c.payload, PayloadBytes: int64(len(c.payload))}) == matchYes) != c.hit {
			t.Errorf("%s on %s: field %v, hit %v (%v)", c.in, c.payload, m.Field(), !c.hit, err)
		}
	}
	if _, err := ParseMatch(`""`); err == nil {
		t.Error("an empty search was taken")
	}
}

// TestSearchSavesNoBurstWhileIdle: a search left idle (stopped, or its steps not asked for) for
// ten minutes goes on at its budget: what it may read at once is the slack, a quarter second's
// worth, not ten minutes' worth; and a page is at least two tasks, so that a page starting one
// task back always reaches a new one.
func TestSearchSavesNoBurstWhileIdle(t *testing.T) {
	s := &Searcher{opt: SearchOptions{KeysPerSecond: 1000}}
	s.start = time.Now().Add(-10 * time.Minute)
	s.prog.Keys = 1000 // a second's worth read, then idle
	if err := s.wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	budget := time.Duration(float64(s.prog.Keys) / 1000 * float64(time.Second))
	if ahead := time.Since(s.start) - budget; ahead > searchSlack+time.Second {
		t.Errorf("after ten idle minutes the search may read %v ahead of its budget; want at most %v", ahead, searchSlack)
	}
	sr := NewSearcher(DelayQueueOf("d", "", store.Milliseconds), []TaskSection{SectionDue}, Match{}, SearchOptions{KeysPerSecond: 1})
	if sr.opt.PageSize < 2 {
		t.Errorf("a budget of 1 key a second gives pages of %d task(s); a page starting one back would never move", sr.opt.PageSize)
	}
}

// commandCalls is how many calls of each command Redis has run, from INFO commandstats.
func commandCalls(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for name, st := range store.ParseCommandStats(info) {
		calls[name] = st.Calls
	}
	return calls
}
