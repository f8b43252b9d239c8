package discover_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/internal/redistest"
	"hourglass/scanner"
)

func TestSmoke(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	p := rdb.Pipeline()
	for app := 0; app < 3; app++ {
		for dev := 0; dev < 20; dev++ {
			for h := 0; h < 5; h++ {
				w := now.Add(-time.Duration(h) * time.Hour)
				k := fmt.Sprintf("flow:count:app%d:dev%d:10.0.%d.%d:%s", app, dev, app, dev, w.Format("2006010215"))
				p.Set(ctx, k, 17+h, time.Until(w.Truncate(time.Hour).Add(49*time.Hour)))
			}
			k := fmt.Sprintf("flow:count:app%d:dev%d:10.0.%d.%d:%s", app, dev, app, dev, now.Format("20060102"))
			p.Set(ctx, k, 99, 30*24*time.Hour)
		}
	}
	for i := 0; i < 50; i++ {
		p.Set(ctx, fmt.Sprintf("cache:user:%d", i), `{"name":"x"}`, time.Hour)
		p.HSet(ctx, fmt.Sprintf("user:%d", i), "name", "x")
		p.ZAdd(ctx, fmt.Sprintf("hist:%d:login", i), redisZ(float64(now.UnixMilli()))...)
		p.Expire(ctx, fmt.Sprintf("hist:%d:login", i), time.Minute)
	}
	p.ZAdd(ctx, "delay:orders", redisZ(float64(now.Add(time.Hour).Unix()))...)
	p.LPush(ctx, "queue:emails", "a", "b")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := scanner.Take(ctx, rdb, nil, scanner.Options{}, scanner.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(snap.Unclaimed, "", " ")
	t.Log(string(b))
}

func redisZ(s float64) []redis.Z { return []redis.Z{{Score: s, Member: fmt.Sprint(s)}} }
