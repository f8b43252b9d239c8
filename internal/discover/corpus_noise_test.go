package discover_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
)

// noiseFamilies writes what most keyspaces mostly hold: caches, sessions, records, sets, rankings.
// None of it is a structure hourglass reads, and none may be proposed as a counter.
func noiseFamilies(c *corpus) {
	ctx := c.t.Context()
	other, undecided := discover.KindOther, discover.KindUndecided
	noise := func(name string, kind discover.Kind, pattern string, fill func(p redis.Pipeliner)) {
		c.add(&family{name: name, kind: kind, patterns: []string{pattern}, noise: true}, func() { c.exec(fill) })
	}
	lookalikeFamilies(c)
	noise("cache json", other, "cache:user:<>", func(p redis.Pipeliner) {
		for i := range 40 {
			p.Set(ctx, fmt.Sprintf("cache:user:%d", 3000+i*7), fmt.Sprintf(`{"id":%d,"name":"user %d","plan":"pro"}`, i, i), time.Hour)
		}
	})
	noise("sessions", other, "session:<>", func(p redis.Pipeliner) {
		for i := range 30 {
			p.Set(ctx, "session:"+randHex(16), fmt.Sprintf(`{"user_id":%d,"csrf":"%s"}`, 500+i, randHex(8)), 30*time.Minute)
		}
	})
	noise("auth tokens to user ids", other, "auth:token:<>", func(p redis.Pipeliner) {
		for range 25 {
			p.Set(ctx, "auth:token:"+randHex(20), fmt.Sprint(1_000_000+c.rnd.IntN(9_000_000)), 12*time.Hour)
		}
	})
	noise("user records", other, "user:<>", func(p redis.Pipeliner) {
		for i := range 40 {
			p.HSet(ctx, fmt.Sprintf("user:%d", 3000+i*7), "name", fmt.Sprint("user ", i), "email", fmt.Sprintf("u%d@example.com", i))
		}
	})
	noise("follower sets", other, "user:<>:followers", func(p redis.Pipeliner) {
		for i := range 20 {
			p.SAdd(ctx, fmt.Sprintf("user:%d:followers", 3000+i*7), anys(members(c, 5))...)
		}
	})
	noise("last seen times", other, "last_seen:<>", func(p redis.Pipeliner) {
		for i := range 20 {
			p.Set(ctx, fmt.Sprintf("last_seen:%d", 3000+i*7), fmt.Sprint(c.now.Unix()-int64(c.rnd.IntN(86400))), 0)
		}
	})
	noise("daily report cache", other, "report:daily:<>", func(p redis.Pipeliner) {
		for d := range 7 {
			p.Set(ctx, "report:daily:"+c.now.AddDate(0, 0, -d).Format("2006-01-02"), `{"orders":1234,"revenue":"5678.90"}`, 0)
		}
	})
	noise("hourly page cache", other, "cache:home:<>", func(p redis.Pipeliner) {
		for h := range 4 {
			at := c.now.Add(-time.Duration(h) * time.Hour)
			p.Set(ctx, "cache:home:"+at.Format("2006010215"), `<html><body>home</body></html>`, 2*time.Hour)
		}
	})
	noise("leaderboards", undecided, "leaderboard:<>", func(p redis.Pipeliner) {
		for _, game := range []string{"chess", "poker", "sudoku", "tetris"} {
			for i := range 30 {
				p.ZAdd(ctx, "leaderboard:"+game, redis.Z{Score: float64(c.rnd.IntN(5000)), Member: fmt.Sprint("player", i)})
			}
		}
	})
	c.add(&family{name: "sometimes an integer", kind: undecided, patterns: []string{"cache:stats:<>"}, noise: true,
		evidence: "integer"}, func() {
		c.exec(func(p redis.Pipeliner) {
			for i := range 20 {
				v := fmt.Sprint(c.rnd.IntN(100))
				if i%2 == 0 {
					v = fmt.Sprintf(`{"views":%d}`, i)
				}
				p.Set(ctx, fmt.Sprintf("cache:stats:%d", 40+i), v, 0)
			}
		})
	})
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
