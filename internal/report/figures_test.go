package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// TestReportMarksWhatItCouldNotCount sweeps a real Redis holding a counter window and a fixed
// limiter whose values sum past the int64 range, bitmaps whose unions are over the sweep's
// budget, and delay queues a pattern finds, one with a hostile name. The text report marks the
// saturated totals with ≥, says each skipped union's size where its count would be (never 0)
// and why below, and names every queue's key, escaped; the JSON says the same.
func TestReportMarksWhatItCouldNotCount(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := redistest.ClearOfHourEnd(t, time.Minute).UTC()
	hits, err := store.NewFamily(store.FamilySpec{Name: "hits", Pattern: "hits:<page>:<window>", HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dau, err := store.NewFamily(store.FamilySpec{Name: "dau", Pattern: "dau:<window>", DayFormat: "yyyyMMdd", DayRetention: 40 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	hour := store.WindowAt(store.Hour, now, time.UTC)
	for _, page := range []string{"a", "b"} {
		k, _ := hits.Key(hour, []string{page})
		rdb.Set(ctx, k, math.MaxInt64, time.Hour)
	}
	for i, d := range []int{0, -1} { // two days of 30 KiB bitmaps: a union reads 60 KiB
		k, _ := dau.Key(store.WindowAt(store.Day, now.AddDate(0, 0, d), time.UTC), nil)
		rdb.SetBit(ctx, k, int64(i), 1)
		rdb.SetBit(ctx, k, 30<<13-1, 1)
		rdb.Expire(ctx, k, time.Hour)
	}
	rdb.Set(ctx, "rl:fx:u1", math.MaxInt64, time.Hour)
	rdb.Set(ctx, "rl:fx:u2", math.MaxInt64, time.Hour)
	queues := []string{"delay:alpha", "delay:beta", "delay:\x1b[2Jgamma"}
	for i, k := range queues {
		for j := range 3 - i {
			rdb.ZAdd(ctx, k, redis.Z{Score: float64(now.Unix() - 60), Member: fmt.Sprint(j)})
		}
	}
	pattern := func(text string) *store.Pattern {
		p, err := store.ParseKeyPattern(text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	structs := scanner.Structures{
		DelayQueues: []scanner.DelayQueueSpec{{Name: "topics", Pattern: pattern("delay:<topic>"), Unit: store.Seconds}},
		Limiters: []scanner.LimiterSpec{{LimiterSpec: store.LimiterSpec{Name: "fx", Pattern: "rl:fx:<user>", Kind: store.Fixed, Window: time.Hour, Limit: 10},
			Pattern: pattern("rl:fx:<user>")}},
		Uniques: []scanner.UniqueSpec{{Kind: store.Bitmap, Family: dau}},
	}
	fams := []*store.Family{hits}
	// 10 keys/s: a union may read 40 KiB.
	snap, err := scanner.Take(ctx, rdb, fams, scanner.Options{KeysPerSecond: 10, Location: time.UTC, Structures: structs})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Snapshot(&out, snap, fams)
	text := out.String()
	const bound = "≥9,223,372,036,854,775,807"
	lines := func(prefix string) []string {
		var ls []string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, prefix) {
				ls = append(ls, l)
			}
		}
		return ls
	}
	if ls := lines("hits "); len(ls) == 0 || !strings.Contains(ls[0], bound) {
		t.Errorf("the counters row %q lacks %s", ls, bound)
	}
	if ls := lines("  hour "); len(ls) == 0 || !strings.Contains(ls[0], bound) {
		t.Errorf("the window row %q lacks %s", ls, bound)
	}
	if ls := lines("fx "); len(ls) != 1 || !strings.Contains(ls[0], bound) {
		t.Errorf("the limiter row %q lacks %s", ls, bound)
	}
	skipped := "skipped: 60.0 KiB over budget"
	if ls := lines("dau "); len(ls) != 1 || strings.Count(ls[0], skipped) != 2 || strings.HasSuffix(ls[0], " 0") {
		t.Errorf("the uniques row %q, want both unions %q", ls, skipped)
	}
	for _, want := range []string{"bitmap dau: 7-day union " + skipped + " (it may read 40.0 KiB: ", "bitmap dau: 30-day union " + skipped} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	rows := lines("topics ")
	if len(rows) != len(queues) {
		t.Fatalf("%d topics rows, want %d:\n%s", len(rows), len(queues), text)
	}
	for i, k := range queues {
		if !strings.Contains(rows[i], "  "+format.Escape(k)+"  ") {
			t.Errorf("topics row %d %q does not name its key %s", i, rows[i], format.Escape(k))
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Error("a key reached the report unescaped")
	}

	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, want := range []string{`"union_7d":null`, `"union_30d":null`, `"union_7d_skipped":{"bytes":61440,"budget_bytes":40960,"reason":"`,
		`"saturated":true`, `"hits_saturated":true`, `"key":"delay:alpha"`, `"key":"delay:beta"`, `"key":"delay:\\x1b[2Jgamma"`} {
		if !strings.Contains(js, want) {
			t.Errorf("the JSON lacks %s", want)
		}
	}
}
