package metrics

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// fixtureConfig has a counter family of each shape (hour only, hour and day) and a structure of
// each kind, cut in UTC.
const fixtureConfig = `
timezone = "UTC"

[[counter]]
name = "flow"
pattern = "flow:<app>:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"

[[counter]]
name = "rev"
pattern = "rev:{<ad>}:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"
day_format = "yyyyMMdd"
day_retention = "30d"

[[delay_queue]]
name = "orders"
key = "delay:orders"
score_unit = "ms"

[[delay_queue]]
name = "topics"
pattern = "topic:<name>"
score_unit = "ms"

[[delay_queue]]
name = "odd"
key = "delay:odd"
score_unit = "ms"

[[list_queue]]
name = "emails"
key = "queue:emails"

[[list_queue]]
name = "boxes"
pattern = "box:<name>"

[[limiter]]
name = "api"
pattern = "rl:<user>"
kind = "sliding"
window = "1m"
limit = 3

[[unique]]
name = "uv"
pattern = "uv:{<page>}:<window>"
day_format = "yyyyMMdd"
day_retention = "90d"

[[bitmap]]
name = "dau"
pattern = "dau:{<app>}:<window>"
day_format = "yyyyMMdd"
day_retention = "90d"

[[lock]]
name = "jobs"
pattern = "lock:<id>"

[[bloom]]
name = "seen"
pattern = "bf:<name>"
`

// fixture is a real redis-server holding keys of every kind, and a Watcher of them.
type fixture struct {
	rdb *redis.Client
	w   *watch.Watcher
	now time.Time
}

// newFixture starts a redis-server, writes keys in every TTL and value state of a family and in
// every state of each structure, and returns a Watcher of them.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := redistest.Start(t)
	cfg, err := config.Parse("metrics.toml", []byte(fixtureConfig), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{rdb: srv.Client(t), now: redistest.ClearOfHourEnd(t, time.Minute).UTC()}
	f.writeCounters(t)
	f.writeStructures(t)
	opt := cfg.SweepOptions(true)
	opt.Target, opt.Mode = srv.Addr, "standalone"
	f.w = watch.New(f.rdb, cfg.Counters, opt)
	return f
}

// hour is the hour window's text at now+d; day the day's.
func (f *fixture) hour(d time.Duration) string { return f.now.Add(d).Format("2006010215") }
func (f *fixture) day() string                 { return f.now.Format("20060102") }

// do runs one command, failing the test on an error.
func (f *fixture) do(t *testing.T, args ...any) {
	t.Helper()
	if err := f.rdb.Do(t.Context(), args...).Err(); err != nil && err != redis.Nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// writeCounters writes flow's keys: ok 2, no_ttl 2, over_retention 1, expired_but_present 1; and
// by value integer 4, not_integer 1, wrong_type 1. rev holds a sound hour and day key.
func (f *fixture) writeCounters(t *testing.T) {
	hourEnd := f.now.Truncate(time.Hour).Add(time.Hour)
	sound := strconv.FormatInt(hourEnd.Add(48*time.Hour).Unix(), 10)
	cur := f.hour(0)
	f.do(t, "SET", "flow:ok:"+cur, 10)
	f.do(t, "EXPIREAT", "flow:ok:"+cur, sound)
	f.do(t, "SET", "flow:leak:"+cur, 5)
	f.do(t, "SET", "flow:long:"+cur, 7, "EX", 30*24*3600)
	f.do(t, "SET", "flow:old:"+f.hour(-72*time.Hour), 3, "EX", 3600)
	f.do(t, "RPUSH", "flow:list:"+cur, "x")
	f.do(t, "EXPIREAT", "flow:list:"+cur, sound)
	f.do(t, "SET", "flow:text:"+cur, "abc")
	f.do(t, "SET", "rev:{a}:"+cur, 4, "EX", 24*3600)
	f.do(t, "SET", "rev:{a}:"+f.day(), 4, "EX", 7*24*3600)
	f.do(t, "SET", "unrelated", 1)
}

// writeStructures writes orders with 2 tasks not due, 1 due and 1 in flight; topics' queues
// topic:a (2 not due) and topic:b (1 due); odd with 2 tasks scored in seconds, not its ms;
// emails with 2 queued and 1 processing (no key for boxes); api's keys under, at and over its
// limit of 3; a unique and a bitmap key of today; a lock with a TTL and one without; a Bloom
// filter of 3 elements.
func (f *fixture) writeStructures(t *testing.T) {
	ms := func(d time.Duration) int64 { return f.now.Add(d).UnixMilli() }
	f.do(t, "ZADD", "delay:orders", ms(-30*time.Second), "late", ms(time.Hour), "later1", ms(2*time.Hour), "later2")
	f.do(t, "ZADD", store.InFlightKey("delay:orders"), ms(time.Minute), "claimed")
	f.do(t, "ZADD", "topic:a", ms(time.Hour), "a1", ms(time.Hour), "a2")
	f.do(t, "ZADD", "topic:b", ms(-time.Minute), "b1")
	f.do(t, "ZADD", "delay:odd", f.now.Unix(), "o1", f.now.Unix()+60, "o2")
	f.do(t, "RPUSH", "queue:emails", "m1", "m2")
	f.do(t, "RPUSH", store.ProcessingKey("queue:emails"), "m0")
	for user, hits := range map[string]int{"u1": 1, "u2": 3, "u3": 5} {
		for i := range hits {
			f.do(t, "ZADD", "rl:"+user, ms(-time.Duration(i)*time.Second), "hit"+strconv.Itoa(i))
		}
		f.do(t, "PEXPIRE", "rl:"+user, 60000)
	}
	f.do(t, "PFADD", "uv:{home}:"+f.day(), "a", "b", "c")
	f.do(t, "SETBIT", "dau:{ios}:"+f.day(), 5, 1)
	f.do(t, "SETBIT", "dau:{ios}:"+f.day(), 9, 1)
	f.do(t, "SET", "lock:1", "token", "PX", 60000)
	f.do(t, "SET", "lock:2", "token")
	b, err := store.New(f.rdb, store.Options{}).Bloom("bf:users", store.BloomOptions{Capacity: 100})
	if err == nil {
		_, err = b.AddMany(t.Context(), "a", "b", "c")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// sweep polls w until a sweep completes and returns that poll's status.
func sweep(t *testing.T, w *watch.Watcher) snapshot.Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := w.Poll(t.Context(), time.Second, "")
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if st.Sweep.Completed {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatal("no sweep completed in 20s")
		}
	}
}

// scrapeHandler GETs /metrics from col's handler and returns the text.
func scrapeHandler(t *testing.T, col *collector) string {
	t.Helper()
	rec := httptest.NewRecorder()
	handler(col, "test").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// sample is one line of a scrape.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parse reads the samples of Prometheus text, failing the test on a line it cannot read.
func parse(t *testing.T, text string) []sample {
	t.Helper()
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, ok := parseLine(line)
		if !ok {
			t.Fatalf("unreadable sample line %q", line)
		}
		out = append(out, s)
	}
	return out
}

func parseLine(line string) (sample, bool) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, false
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for line[0] != '}' {
			k, rest, ok := strings.Cut(line, "=")
			if !ok {
				return s, false
			}
			v, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return s, false
			}
			s.labels[k], _ = strconv.Unquote(v)
			line = strings.TrimPrefix(rest[len(v):], ",")
			if line == "" {
				return s, false
			}
		}
		line = line[1:]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
	s.value = v
	return s, err == nil
}

// find returns the samples of name whose labels include want (pairs of name and value).
func find(samples []sample, name string, want ...string) []sample {
	var out []sample
	for _, s := range samples {
		if s.name != name {
			continue
		}
		match := true
		for i := 0; i+1 < len(want); i += 2 {
			match = match && s.labels[want[i]] == want[i+1]
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}

// values maps each sample of name with labels want to its value, by the value of label by.
func values(samples []sample, name, by string, want ...string) map[string]float64 {
	m := map[string]float64{}
	for _, s := range find(samples, name, want...) {
		m[s.labels[by]] = s.value
	}
	return m
}

// sum adds up a map's values.
func sum(m map[string]float64) float64 {
	var n float64
	for _, v := range m {
		n += v
	}
	return n
}

// keysOf returns a map's keys, sorted.
func keysOf(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// promtool returns the path of Prometheus's promtool, skipping (or, under CI, failing) the test
// without it.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("promtool is not installed, and CI needs it: %v", err)
		}
		t.Skip("promtool is not installed; install Debian's prometheus to run this test")
	}
	return path
}
