package discover_test

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
)

// lookalikeFamilies writes noise that looks like a structure at a glance: short-lived integers
// that are codes, not counts; random tokens that are not locks' holders; sorted sets of past
// times that are logs and indexes, not queues or limiters; lists that are not queues; names
// with weeks, milliseconds, slugs, slashes and UUIDs.
func lookalikeFamilies(c *corpus) {
	ctx := c.t.Context()
	other := discover.KindOther
	noise := func(name string, pattern string, fill func(p redis.Pipeliner)) {
		c.add(&family{name: name, kind: other, patterns: []string{pattern}, noise: true}, func() { c.exec(fill) })
	}
	noise("captcha codes", "captcha:<>", func(p redis.Pipeliner) {
		for range 20 {
			p.Set(ctx, "captcha:"+newUUID(), fmt.Sprint(1000+c.rnd.IntN(9000)), 2*time.Minute)
		}
	})
	noise("otp codes", "otp:<>", func(p redis.Pipeliner) {
		for i := range 15 {
			p.Set(ctx, fmt.Sprintf("otp:1380013%04d", i*37), fmt.Sprint(100000+c.rnd.IntN(900000)), 5*time.Minute)
		}
	})
	noise("csrf tokens", "csrf:<>", func(p redis.Pipeliner) {
		for range 20 {
			p.Set(ctx, "csrf:"+randHex(16), randHex(24), 2*time.Hour)
		}
	})
	noise("email verification tokens", "verify:email:<>", func(p redis.Pipeliner) {
		for i := range 12 {
			p.Set(ctx, fmt.Sprintf("verify:email:%d", 3000+i*7), newUUID(), 24*time.Hour)
		}
	})
	noise("login logs", "user:<>:logins", func(p redis.Pipeliner) {
		for i := range 20 {
			k := fmt.Sprintf("user:%d:logins", 3000+i*7)
			for d := range 6 {
				at := c.now.Add(-time.Duration(d*5+c.rnd.IntN(5)) * 24 * time.Hour).UnixMilli()
				p.ZAdd(ctx, k, redis.Z{Score: float64(at), Member: fmt.Sprint(at)})
			}
		}
	})
	noise("recently viewed lists", "user:<>:recent", func(p redis.Pipeliner) {
		for i := range 20 {
			k := fmt.Sprintf("user:%d:recent", 3000+i*7)
			p.LPush(ctx, k, anys(members(c, 5))...)
			p.LTrim(ctx, k, 0, 49)
		}
	})
	noise("article index by date", "articles:by_date", func(p redis.Pipeliner) {
		for i := range 60 {
			at := c.now.Add(-time.Duration(i*36) * time.Hour).Unix()
			p.ZAdd(ctx, "articles:by_date", redis.Z{Score: float64(at), Member: fmt.Sprint("article:", 9000+i)})
		}
	})
	noise("weekly report cache", "report:weekly:<>", func(p redis.Pipeliner) {
		for w := range 4 {
			y, wk := c.now.AddDate(0, 0, -7*w).ISOWeek()
			p.Set(ctx, fmt.Sprintf("report:weekly:%d-W%02d", y, wk), `{"orders":99}`, 0)
		}
	})
	noise("events by ms", "event:<>", func(p redis.Pipeliner) {
		for i := range 15 {
			p.Set(ctx, fmt.Sprint("event:", c.now.UnixMilli()-int64(i*1337)), `{"type":"click"}`, time.Hour)
		}
	})
	noise("slash cache", "cache/v1/product/<>", func(p redis.Pipeliner) {
		for i := range 15 {
			p.Set(ctx, fmt.Sprint("cache/v1/product/", 7700+i), `{"sku":"x"}`, time.Hour)
		}
	})
	noise("orders by uuid", "order:<>", func(p redis.Pipeliner) {
		for range 15 {
			p.HSet(ctx, "order:"+newUUID(), "total", "12.50", "status", "paid")
		}
	})
	noise("scores by 8-digit user id", "score:<>", func(p redis.Pipeliner) {
		for i := range 40 { // ids from 20,250,101: some read as dates (20250101), none is one
			p.Set(ctx, fmt.Sprintf("score:%d", 20250101+i*9973), fmt.Sprint(c.rnd.IntN(5000)), 0)
		}
	})
	c.add(&family{name: "product slugs", kind: other, patterns: []string{"product:*"}, noise: true}, func() {
		c.exec(func(p redis.Pipeliner) {
			for _, slug := range []string{"red-shoes", "blue-running-shoes", "green-hat", "black-leather-belt", "white-shirt",
				"grey-wool-socks", "brown-boots", "pink-scarf", "tan-summer-hat", "navy-blue-jacket"} {
				p.Set(ctx, "product:"+slug, `{"price":10}`, 0)
			}
		})
	})
}
