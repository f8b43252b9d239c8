package discover_test

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
)

// blogFamilies writes keys the way the blog posts hourglass comes from do: plain commands, the
// window in the name, an EXPIRE after the first write.
func blogFamilies(c *corpus) {
	ctx := c.t.Context()
	hour := func(h int) time.Time { return c.now.Add(-time.Duration(h) * time.Hour).Truncate(time.Hour) }
	c.add(&family{name: "blog flow counter", kind: discover.KindCounter, patterns: []string{"flow:count:<>:<>:<>:<>"},
		hour: "yyyyMMddHH"}, func() {
		c.exec(func(p redis.Pipeliner) {
			for h := range 5 {
				for app := range 3 {
					for dev := range 12 {
						k := fmt.Sprintf("flow:count:app%d:device%d:10.1.%d.%d:%s", 123+app, 456+dev, app, dev, hour(h).Format("2006010215"))
						p.IncrBy(ctx, k, int64(1+c.rnd.IntN(4000)))
						// Written during its hour, expiring two days after that write.
						p.ExpireAt(ctx, k, hour(h).Add(time.Duration(c.rnd.IntN(3600))*time.Second).Add(48*time.Hour))
					}
				}
			}
		})
	})
	c.add(&family{name: "blog ad stats h+d", kind: discover.KindCounter, patterns: []string{"{<>:<>}:<>"},
		hour: "yyyyMMddHH", day: "yyyyMMdd"}, func() { adStats(c, hour) })
	c.add(&family{name: "shop sales h+d, one shop by hour", kind: discover.KindCounter, patterns: []string{"sales:<>:<>"},
		hour: "yyyyMMddHH", day: "yyyyMMdd"}, func() {
		c.exec(func(p redis.Pipeliner) {
			for d := range 3 {
				day := time.Date(c.now.Year(), c.now.Month(), c.now.Day()-d, 0, 0, 0, 0, time.Local)
				for shop := range 5 {
					k := fmt.Sprintf("sales:shop%d:%s", 3+shop, day.Format("20060102"))
					p.IncrBy(ctx, k, int64(1+c.rnd.IntN(99)))
					p.ExpireAt(ctx, k, day.Add(time.Duration(c.rnd.IntN(3600))*time.Second).Add(30*24*time.Hour))
				}
			}
			for h := range 2 { // at night only one shop sells
				k := "sales:shop7:" + hour(h).Format("2006010215")
				p.IncrBy(ctx, k, int64(1+c.rnd.IntN(9)))
				p.ExpireAt(ctx, k, hour(h).Add(48*time.Hour))
			}
		})
	})
	c.add(&family{name: "blog sliding limiter", kind: discover.KindSlidingLimiter,
		patterns: []string{"hist:<>:<>", "hist:<>:login", "hist:<>:comment", "hist:<>:reply"}}, func() {
		ms := c.now.UnixMilli()
		for u := range 30 {
			for _, action := range []string{"login", "comment", "reply"} {
				k := fmt.Sprintf("hist:%d:%s", 90210+u*17, action)
				last := ms
				if u%5 == 0 {
					last -= 3 * 86400_000 // a user idle for three days: the post's keys never expire
				}
				c.exec(func(p redis.Pipeliner) {
					for i := range 1 + (u+len(action))%6 {
						at := last - int64(c.rnd.IntN(200_000))
						p.ZAdd(ctx, k, redis.Z{Score: float64(at), Member: fmt.Sprint(at, "-", i)})
					}
					p.ZRemRangeByScore(ctx, k, "0", fmt.Sprint(last-300_000)) // no EXPIRE: as the post writes it
				})
			}
		}
	})
	c.add(&family{name: "blog ms delay zset", kind: discover.KindDelayQueue, patterns: []string{"order_delay_queue"}}, func() {
		c.exec(func(p redis.Pipeliner) {
			for i := range 40 {
				due := c.now.Add(time.Duration(i-3) * 45 * time.Second).UnixMilli()
				p.ZAdd(ctx, "order_delay_queue", redis.Z{Score: float64(due), Member: fmt.Sprintf("order-%d", 5000+i)})
			}
		})
	})
	c.add(&family{name: "blog counter locks", kind: discover.KindLock,
		patterns: []string{"flow:count:<>:<>:<>:<>_lock", "flow:count:app123:<>:<>:<>_lock"}}, func() {
		for dev := range 6 {
			k := fmt.Sprintf("flow:count:app123:device%d:10.1.0.%d:%s_lock", 456+dev, dev, hour(0).Format("2006010215"))
			c.must(c.rdb.SetNX(ctx, k, newUUID(), 5*time.Minute).Err())
		}
	})
	blogLimiters(c)
	adMetrics(c)
	c.add(&family{name: "blog daily bitmap", kind: discover.KindBitmap, patterns: []string{"active:users:<>"}, day: "yyyyMMdd"}, func() {
		c.exec(func(p redis.Pipeliner) {
			for d := range 7 {
				k := "active:users:" + c.now.AddDate(0, 0, -d).Format("20060102")
				for range 300 {
					p.SetBit(ctx, k, int64(c.rnd.IntN(200_000)), 1)
				}
			}
		})
	})
	c.add(&family{name: "blog hll uv", kind: discover.KindUnique, patterns: []string{"uv:page:<>:<>"}, day: "yyyyMMdd"}, func() {
		c.exec(func(p redis.Pipeliner) {
			for d := range 3 {
				for page := range 10 {
					k := fmt.Sprintf("uv:page:%d:%s", 31+page, c.now.AddDate(0, 0, -d).Format("20060102"))
					p.PFAdd(ctx, k, anys(members(c, 40))...)
					// Expiring seven days after its day's first visit.
					day := time.Date(c.now.Year(), c.now.Month(), c.now.Day()-d, 0, 0, 0, 0, time.Local)
					p.ExpireAt(ctx, k, day.Add(time.Duration(c.rnd.IntN(600))*time.Second).Add(7*24*time.Hour))
				}
			}
		})
	})
}

// blogLimiters writes the limiters and locks written with plain commands: a per-minute counter
// of requests per IP (INCR, EXPIRE 60), the same per Unix minute, locks holding "1", and counters
// of hour windows named by their start in Unix seconds.
func blogLimiters(c *corpus) {
	ctx := c.t.Context()
	minute := c.now.Truncate(time.Minute)
	c.add(&family{name: "blog minute limiter", kind: discover.KindFixedLimiter, patterns: []string{"ratelimit:<>:<>"}}, func() {
		c.exec(func(p redis.Pipeliner) {
			for ip := range 20 {
				k := fmt.Sprintf("ratelimit:192.168.7.%d:%s", ip+1, minute.Format("200601021504"))
				p.IncrBy(ctx, k, int64(1+ip%9))
				p.Expire(ctx, k, 5*time.Minute) // well past the minute: the test outlives it
			}
		})
	})
	c.add(&family{name: "blog unix minute limiter", kind: discover.KindFixedLimiter, patterns: []string{"throttle:<>:<>"}}, func() {
		c.exec(func(p redis.Pipeliner) {
			for u := range 15 {
				k := fmt.Sprintf("throttle:u%d:%d", 4000+u, minute.Unix())
				p.IncrBy(ctx, k, int64(1+u%4))
				p.Expire(ctx, k, 5*time.Minute)
			}
		})
	})
	c.add(&family{name: "blog locks holding 1", kind: discover.KindLock, patterns: []string{"job:<>:lock"}}, func() {
		c.exec(func(p redis.Pipeliner) {
			for j := range 6 {
				p.SetNX(ctx, fmt.Sprintf("job:%d:lock", 61000+j), "1", 5*time.Minute)
			}
		})
	})
	c.add(&family{name: "unix hour counters", kind: discover.KindCounter, patterns: []string{"pv:hourly:<>:<>"},
		noEntry: true, evidence: "hour windows"}, func() {
		c.exec(func(p redis.Pipeliner) {
			for h := range 6 {
				for site := range 5 {
					p.IncrBy(ctx, fmt.Sprintf("pv:hourly:%d:%d", 20+site, c.now.Add(-time.Duration(h)*time.Hour).Truncate(time.Hour).Unix()), int64(c.rnd.IntN(5000)))
				}
			}
		})
	})
}

// adStats counts ad impressions per channel and ad in hour and day keys, hash-tagged so both of
// an ad's windows live in one slot: {channel:adId}:yyyyMMddHH and {channel:adId}:yyyyMMdd.
func adStats(c *corpus, hour func(int) time.Time) {
	ctx := c.t.Context()
	c.exec(func(p redis.Pipeliner) {
		for _, ch := range []string{"web", "ios", "android", "mini"} {
			for ad := range 8 {
				tag := fmt.Sprintf("{%s:%d}", ch, 10001+ad*3)
				for h := range 3 {
					k := tag + ":" + hour(h).Format("2006010215")
					p.IncrBy(ctx, k, int64(c.rnd.IntN(900)))
					p.ExpireAt(ctx, k, hour(h).Add(time.Duration(c.rnd.IntN(3600))*time.Second).Add(72*time.Hour))
				}
				k := tag + ":" + c.now.Format("20060102")
				p.IncrBy(ctx, k, int64(c.rnd.IntN(9000)))
				p.Expire(ctx, k, 30*24*time.Hour)
			}
		}
	})
}

// adMetrics keeps each metric of an ad's day under a suffix: pv and click counted with INCRBY,
// uv a HyperLogLog of visitors. One placeholder over the suffix would mix the two.
func adMetrics(c *corpus) {
	ctx := c.t.Context()
	each := func(fill func(p redis.Pipeliner, key string)) func() {
		return func() {
			c.exec(func(p redis.Pipeliner) {
				for d := range 3 {
					for ad := range 6 {
						fill(p, fmt.Sprintf("{ad:%d}:%s", 501+ad, c.now.AddDate(0, 0, -d).Format("20060102")))
					}
				}
			})
		}
	}
	c.add(&family{name: "ad metric counters", kind: discover.KindCounter, patterns: []string{"{ad:<>}:<>:pv", "{ad:<>}:<>:click"},
		day: "yyyyMMdd"}, each(func(p redis.Pipeliner, key string) {
		for _, m := range []string{"pv", "click"} {
			p.IncrBy(ctx, key+":"+m, int64(1+c.rnd.IntN(999)))
			p.Expire(ctx, key+":"+m, 10*24*time.Hour)
		}
	}))
	c.add(&family{name: "ad metric uv", kind: discover.KindUnique, patterns: []string{"{ad:<>}:<>:uv"}, day: "yyyyMMdd"},
		each(func(p redis.Pipeliner, key string) {
			p.PFAdd(ctx, key+":uv", anys(members(c, 20))...)
			p.Expire(ctx, key+":uv", 10*24*time.Hour)
		}))
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
