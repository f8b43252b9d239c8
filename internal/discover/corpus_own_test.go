package discover_test

import (
	"fmt"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/store"
)

// ownFamilies writes hourglass's own structures through the store's writers, as a service that
// imports store would.
func ownFamilies(c *corpus) {
	ownCounters(c)
	ownQueues(c)
	ownLimiters(c)
	ownUniques(c)
	c.add(&family{name: "own lock", kind: discover.KindLock, patterns: []string{"lock:order:<>"}}, func() {
		for i := range 12 {
			_, ok, err := c.st.Acquire(c.t.Context(), fmt.Sprintf("lock:order:%d", 7000+i*13), 10*time.Minute)
			c.must(err)
			if !ok {
				c.t.Fatal("lock taken")
			}
		}
	})
}

func (c *corpus) family(spec store.FamilySpec) *store.Family {
	c.t.Helper()
	f, err := store.NewFamily(spec)
	c.must(err)
	return f
}

// ownCounters writes two counter families through the batch writer: hour and day windows of
// views by app and country, and day windows (yyyy-MM-dd) of clicks by a hash-tagged campaign.
func ownCounters(c *corpus) {
	ctx := c.t.Context()
	views := c.family(store.FamilySpec{Name: "views", Pattern: "views:<app>:<country>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
	clicks := c.family(store.FamilySpec{Name: "clicks", Pattern: "clicks:{<campaign>}:<window>",
		DayFormat: "yyyy-MM-dd", DayRetention: 7 * 24 * time.Hour})
	w := c.st.NewWriter(store.WriterOptions{})
	c.add(&family{name: "own counter h+d", kind: discover.KindCounter, patterns: []string{"views:<>:<>:<>"},
		hour: "yyyyMMddHH", day: "yyyyMMdd"}, func() {
		for h := range 6 {
			at := c.now.Add(-time.Duration(h) * time.Hour)
			for app := range 8 {
				for _, country := range []string{"us", "de", "fr", "jp", "br", "in"} {
					c.must(w.Add(views, []string{fmt.Sprintf("app%d", app+1), country}, int64(1+c.rnd.IntN(90)), at))
				}
			}
		}
		_, err := w.Flush(ctx)
		c.must(err)
	})
	c.add(&family{name: "own counter day dashed", kind: discover.KindCounter, patterns: []string{"clicks:{<>}:<>"},
		day: "yyyy-MM-dd"}, func() {
		for d := range 4 {
			for camp := range 15 {
				c.must(w.Add(clicks, []string{fmt.Sprint(880 + camp*7)}, int64(1+c.rnd.IntN(500)), c.now.AddDate(0, 0, -d)))
			}
		}
		_, err := w.Flush(ctx)
		c.must(err)
	})
}

// ownQueues writes a delay queue scored in ms with tasks claimed and in flight, a pattern of
// delay queues scored in seconds, and a list queue with a task being processed.
func ownQueues(c *corpus) {
	ctx := c.t.Context()
	c.add(&family{name: "own delay queue", kind: discover.KindDelayQueue, patterns: []string{"jobs:delayed:emails"}}, func() {
		q := c.st.DelayQueue("jobs:delayed:emails", store.Milliseconds)
		c.must(q.Enqueue(ctx, c.now.Add(-2*time.Second), "t-a", "t-b", "t-c", "t-d"))
		for i := range 30 {
			c.must(q.Enqueue(ctx, c.now.Add(time.Duration(1+i)*time.Minute), fmt.Sprintf("later-%d", i)))
		}
		_, err := q.Claim(ctx, 3, 10*time.Minute)
		c.must(err)
	})
	c.add(&family{name: "own delay queues by topic", kind: discover.KindDelayQueue, patterns: []string{"delay:<>"}}, func() {
		for _, topic := range []string{"orders", "refunds", "emails", "sms", "push"} {
			q := c.st.DelayQueue("delay:"+topic, store.Seconds)
			for i := range 5 {
				c.must(q.Enqueue(ctx, c.now.Add(time.Duration(30*i-40)*time.Second), fmt.Sprintf("%s-%d", topic, i)))
			}
			if topic != "push" {
				_, err := q.Claim(ctx, 1, 10*time.Minute) // in flight: {delay:<topic>}:inflight
				c.must(err)
			}
		}
	})
	c.add(&family{name: "own list queue", kind: discover.KindListQueue, patterns: []string{"mail:outbox"}}, func() {
		q := c.st.ListQueue("mail:outbox")
		for i := range 20 {
			c.must(q.Push(ctx, fmt.Sprintf(`{"to":"u%d@example.com"}`, i)))
		}
		for range 2 {
			_, ok, err := q.Pop(ctx, time.Millisecond)
			c.must(err)
			if !ok {
				c.t.Fatal("nothing popped")
			}
		}
	})
}

// ownLimiters hits a sliding and a fixed limiter for many users, a few over their limit.
func ownLimiters(c *corpus) {
	ctx := c.t.Context()
	sliding, err := c.st.NewLimiter(store.LimiterSpec{Name: "api", Pattern: "rl:api:<user>", Kind: store.Sliding, Window: 10 * time.Minute, Limit: 20})
	c.must(err)
	c.add(&family{name: "own sliding limiter", kind: discover.KindSlidingLimiter, patterns: []string{"rl:api:<>"}}, func() {
		for u := range 40 {
			for range 1 + u%25 {
				_, err := sliding.Allow(ctx, fmt.Sprintf("user%d", 100+u))
				c.must(err)
			}
		}
	})
	fixed, err := c.st.NewLimiter(store.LimiterSpec{Name: "login", Pattern: "rl:login:<user>", Kind: store.Fixed, Window: c.window(), Limit: 5})
	c.must(err)
	c.add(&family{name: "own fixed limiter", kind: discover.KindFixedLimiter, patterns: []string{"rl:login:<>"}}, func() {
		for u := range 30 {
			for range 1 + u%7 {
				_, err := fixed.Allow(ctx, fmt.Sprintf("user%d", 100+u))
				c.must(err)
			}
		}
	})
}

// window is a fixed window that does not end in the next three minutes, so its keys outlive the
// test.
func (c *corpus) window() time.Duration {
	best := time.Duration(0)
	for _, w := range []time.Duration{10 * time.Minute, 13 * time.Minute, 17 * time.Minute, 19 * time.Minute} {
		left := w - time.Duration(c.now.UnixMilli())*time.Millisecond%w
		if left >= 3*time.Minute {
			return w
		}
		best = max(best, w)
	}
	return best
}

// ownUniques adds visitors to HyperLogLogs by page in hour and day windows, and user ids to
// bitmaps by app in day windows.
func ownUniques(c *corpus) {
	ctx := c.t.Context()
	uv := c.st.NewUniques(store.HyperLogLog, c.family(store.FamilySpec{Name: "uv", Pattern: "visits:uv:<page>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 72 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 14 * 24 * time.Hour}))
	c.add(&family{name: "own unique hll h+d", kind: discover.KindUnique, patterns: []string{"visits:uv:<>:<>"},
		hour: "yyyyMMddHH", day: "yyyyMMdd"}, func() {
		for h := range 4 {
			at := c.now.Add(-time.Duration(h) * time.Hour)
			for _, page := range []string{"home", "search", "cart", "checkout", "product", "help"} {
				for _, g := range []store.Granularity{store.Hour, store.Day} {
					c.must(uv.Add(ctx, g, []string{page}, at, members(c, 50)...))
				}
			}
		}
	})
	dau := c.st.NewUniques(store.Bitmap, c.family(store.FamilySpec{Name: "dau", Pattern: "dau:<app>:<window>",
		DayFormat: "yyyyMMdd", DayRetention: 90 * 24 * time.Hour}))
	c.add(&family{name: "own unique bitmap", kind: discover.KindBitmap, patterns: []string{"dau:<>:<>"}, day: "yyyyMMdd"}, func() {
		for d := range 5 {
			for app := range 4 {
				c.must(dau.Add(ctx, store.Day, []string{fmt.Sprintf("app%d", app+1)}, c.now.AddDate(0, 0, -d), members(c, 200)...))
			}
		}
	})
}

// members are n user ids below 100,000.
func members(c *corpus, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(c.rnd.IntN(100_000))
	}
	return out
}
