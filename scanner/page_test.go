package scanner

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestPageValuesReadInChunks fills a real server with 2,500 counter keys, each with its own value
// and TTL (some without a TTL, one a list where a counter goes), and sweeps it in pages of 1000:
// every key is read with its TTL and value, and each page's values come in MGETs of at most
// valueChunk keys (so no read holds Redis for long, and each MGET follows its keys' PTTLs). A
// MaxCall of a second keeps the tuner from making the chunks smaller on a slow machine
// (TestCallsKeepToMaxCall shows it does under a small one).
func TestPageValuesReadInChunks(t *testing.T) {
	ctx := t.Context()
	rdb := redistest.Start(t).Client(t)
	hour := benchHours()[0]
	const n = 2500
	pipe := rdb.Pipeline()
	for i := range n {
		name := counterName(i, hour)
		switch {
		case i == 1234:
			pipe.RPush(ctx, name, "not a counter")
		case i%7 == 0:
			pipe.Set(ctx, name, i+1, 0)
		default:
			pipe.Set(ctx, name, i+1, time.Hour+time.Duration(i)*time.Second)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s := New(rdb, families(t), Options{Count: 1000, MaxCall: time.Second, Location: shanghai})
	chunks, read := 0, map[string]Key{}
	if err := s.Run(ctx, func(p Page) {
		chunks += (len(p.Keys) + valueChunk - 1) / valueChunk
		for _, k := range p.Keys {
			read[k.Name] = k
		}
	}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := counterName(i, hour)
		k, ok := read[name]
		switch {
		case !ok:
			t.Errorf("%s was not read", name)
		case i == 1234:
			if !k.WrongType {
				t.Errorf("%s, a list, read as %+v", name, k)
			}
		case k.Value != strconv.Itoa(i+1):
			t.Errorf("%s value %q, want %d", name, k.Value, i+1)
		case i%7 == 0 && k.TTL != NoTTL:
			t.Errorf("%s TTL %v, want none", name, k.TTL)
		case i%7 != 0 && (k.TTL > time.Hour+time.Duration(i)*time.Second || k.TTL < time.Hour+time.Duration(i-5)*time.Second):
			t.Errorf("%s TTL %v, want %v", name, k.TTL, time.Hour+time.Duration(i)*time.Second)
		}
	}
	if got := commandCalls(t, rdb, "mget"); got != chunks {
		t.Errorf("%d MGETs for the pages' %d chunks of at most %d keys", got, chunks, valueChunk)
	}
}

// commandCalls returns how often cmd ran since the last CONFIG RESETSTAT, from INFO commandstats.
func commandCalls(t *testing.T, rdb *redis.Client, cmd string) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			calls, _, _ := strings.Cut(rest, ",")
			n, _ := strconv.Atoi(calls)
			return n
		}
	}
	return 0
}
