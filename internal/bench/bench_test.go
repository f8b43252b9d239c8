package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"hourglass/internal/config"
	"hourglass/internal/redistest"
)

// lines is a progress line's writer that keeps each line, and calls on when one holds a text.
type lines struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	when   string
	on     func()
	called time.Time
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on != nil && l.called.IsZero() && strings.Contains(string(p), l.when) {
		l.called = time.Now()
		l.on()
	}
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestRun runs a small bench on a server of its own and checks its report: every case's server
// time attributed to its commands, every ratio computed from its figures, every goal from its
// ratio, the JSON's fields all documented and all there, and the progress line counting every
// step. No figure is held to a speed.
func TestRun(t *testing.T) {
	redistest.Binary(t)
	log := &lines{}
	const events, keys = 2000, 3000
	rep, err := Run(t.Context(), Options{Events: events, Keys: keys, LoadFor: time.Second, Log: log, Defaults: config.Builtin(redistest.Shipped(t))})
	if err != nil {
		t.Fatal(err)
	}
	checkProgress(t, log.String(), steps(true, 3))
	_, rb := exec.LookPath("redis-benchmark")
	checkServerTime(t, rep, rb == nil)
	checkRatios(t, rep)
	if rep.SweepLongestUs == nil || !rep.SweepLongestExact || rep.SweepLongestFrom != "SLOWLOG, every call logged" ||
		rep.SweepCalls == nil || *rep.SweepCalls < keys/1000 || rep.SweepCallsOver == nil || *rep.SweepCallsOver > *rep.SweepCalls {
		t.Errorf("sweep's longest call %v (exact %v), %q; %v calls logged, %v over 2 ms", rep.SweepLongestUs, rep.SweepLongestExact,
			rep.SweepLongestFrom, rep.SweepCalls, rep.SweepCallsOver)
	}
	for name, v := range map[string]*float64{"console": rep.ConsoleShare, "serve": rep.ServeShare} {
		if v == nil || *v <= 0 || *v > 100 {
			t.Errorf("%s's share of the server's time: %v", name, v)
		}
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	checkDocumented(t, out)
	var table bytes.Buffer
	WriteTable(&table, rep)
	for _, row := range []string{"SERVER µs/PAIR", "keys there", "redis-benchmark -c 4 -P 16", "claimed (100 a call)",
		"SWEEP OF 3,000 KEYS BESIDE RAW SCAN, 3 PASSES EACH IN TURN", "longest sweep call: ", "AT THE DEFAULTS, ON 3,000 KEYS",
		"sweep, longest call", "writer ÷ redis-benchmark, server µs/pair, keys there, 4 connections", "DISCOVER: 3,000 KEYS"} {
		if !strings.Contains(table.String(), row) {
			t.Errorf("the table has no %q:\n%s", row, table.String())
		}
	}
	if strings.Contains(table.String(), "unknown") && rb == nil {
		t.Errorf("a figure unknown in a run on bench's own server:\n%s", table.String())
	}
}

// checkProgress checks the progress lines (not a terminal: one a step) count 1 to total in turn
// and end with the run's time.
func checkProgress(t *testing.T, log string, total int) {
	t.Helper()
	var n int
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		if strings.HasPrefix(line, "hourglass: bench on a redis-server of its own at ") {
			continue
		}
		if n == total {
			if !regexp.MustCompile(fmt.Sprintf(`^hourglass: bench: %d steps in \d+s$`, total)).MatchString(line) {
				t.Errorf("last line %q", line)
			}
			return
		}
		n++
		if !regexp.MustCompile(fmt.Sprintf(`^hourglass: bench: %d/%d \d+s: \S`, n, total)).MatchString(line) {
			t.Fatalf("step %d's line is %q", n, line)
		}
	}
	t.Errorf("%d steps of %d shown:\n%s", n, total, log)
}

// checkServerTime checks each case's server time: there, over 0, of the case's own commands.
func checkServerTime(t *testing.T, rep *Report, rb bool) {
	t.Helper()
	cases := []string{"bare_client_c1", "bare_client_c4", "limiter", "delay_queue_enqueue", "delay_queue_claim", "delay_queue_ack",
		"sweep", "raw_scan", "console", "serve", "discover_config_sweep", "discover"}
	for _, c := range writerPlan {
		cases = append(cases, c.id)
	}
	if rb {
		cases = append(cases, "redis_benchmark_fresh_c1", "redis_benchmark_fresh_c4", "redis_benchmark_steady_c1", "redis_benchmark_steady_c4")
	}
	for _, id := range cases {
		st := rep.ServerTime[id]
		if st == nil || st.Usec <= 0 || st.UsPer <= 0 || st.Units <= 0 || st.Calls <= 0 || st.LongestAtMost == nil {
			t.Errorf("%s: server time %+v", id, st)
			continue
		}
		var sum float64
		for _, v := range st.ByCommand {
			sum += v
		}
		if !near(sum, st.Usec) || !near(st.UsPer, st.Usec/st.Units) {
			t.Errorf("%s: %v µs over %v %ss is not %v a %s, nor the sum of %v", id, st.Usec, st.Units, st.Unit, st.UsPer, st.Unit, st.ByCommand)
		}
	}
	// The writer's and redis-benchmark's time is their scripts', each counted once (and the
	// writer's SCRIPT LOAD before its first pipeline).
	for id, st := range rep.ServerTime {
		if strings.HasPrefix(id, "writer_") || strings.HasPrefix(id, "redis_benchmark_") || strings.HasPrefix(id, "bare_client_") {
			names := slices.DeleteFunc(slices.Sorted(mapKeys(st.ByCommand)), func(n string) bool { return n == "script|load" })
			if !slices.Equal(names, []string{"evalsha"}) {
				t.Errorf("%s's time is of %v; want EVALSHA's alone", id, names)
			}
		}
	}
	for i, w := range rep.Writer {
		if w.ServerUsPerPair == nil || *w.ServerUsPerPair != rep.ServerTime[writerPlan[i].id].UsPer || w.LongestCallUs == nil {
			t.Errorf("writer case %d: server µs a pair %v, longest %v", i, w.ServerUsPerPair, w.LongestCallUs)
		}
		if want := map[bool]string{false: "fresh", true: "steady"}[writerPlan[i].steady]; w.Keys != want || w.Case != writerPlan[i].name {
			t.Errorf("writer case %d is %q on %s keys", i, w.Case, w.Keys)
		}
	}
}

// near says a and b are equal but for rounding.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkRatios checks every ratio against the figures it is made of, and every goal against its
// ratio.
func checkRatios(t *testing.T, rep *Report) {
	t.Helper()
	s, g := rep.ServerFigures, rep.Goals
	eq := func(name string, got, a, b *float64) {
		if a == nil || b == nil {
			if got != nil {
				t.Errorf("%s is %v of an unknown figure", name, *got)
			}
			return
		}
		if got == nil || *got != *a / *b {
			t.Errorf("%s = %v, want %v ÷ %v", name, got, *a, *b)
		}
	}
	eq("writer fresh c1", s.WriterFreshC1VsRB, s.WriterFreshC1, s.RBFreshC1)
	eq("writer fresh c4", s.WriterFreshC4VsRB, s.WriterFreshC4, s.RBFreshC4)
	eq("writer steady c1", s.WriterSteadyC1VsRB, s.WriterSteadyC1, s.RBSteadyC1)
	eq("writer steady c4", s.WriterSteadyC4VsRB, s.WriterSteadyC4, s.RBSteadyC4)
	eq("single pair c1", s.SinglePairC1VsRB, s.SinglePairC1, s.RBFreshC1)
	eq("go-redis c4", s.BareC4VsRB, s.BareC4, s.RBFreshC4)
	eq("sweep server µs", s.SweepUsVsRawScan, s.SweepUs, s.RawScanUs)
	eq("writer wall c1", rep.WriterVsRedisBenchmark, &rep.Writer[1].PairsPerSec, rep.RedisBenchmark)
	if s.WriterSteadyC1 != rep.Writer[6].ServerUsPerPair || s.WriterFreshC4 != rep.Writer[3].ServerUsPerPair {
		t.Errorf("the headline writer figures are not the cases'")
	}
	goal := func(name string, got *bool, v *float64, limit float64) {
		if (v == nil) != (got == nil) || v != nil && *got != (*v <= limit) {
			t.Errorf("goal %s: %v for %v against %v", name, got, v, limit)
		}
	}
	goal("steady c1", g.WriterSteadyC1, s.WriterSteadyC1VsRB, goalSteady)
	goal("steady c4", g.WriterSteadyC4, s.WriterSteadyC4VsRB, goalSteady)
	goal("fresh c1", g.WriterFreshC1, s.WriterFreshC1VsRB, goalFresh)
	goal("fresh c4", g.WriterFreshC4, s.WriterFreshC4VsRB, goalFresh)
	goal("sweep µs", g.SweepServerUs, s.SweepUs, goalSweepUs)
	goal("sweep longest", g.SweepLongest, s.SweepLongestUs, goalSweepLongestUs)
	sp := rep.SweepSpread
	if g.SweepVsRawScan == nil || *g.SweepVsRawScan != (sp.RatioMedian >= goalSweepRatio) {
		t.Errorf("goal sweep ÷ raw SCAN: %v for %v", g.SweepVsRawScan, sp.RatioMedian)
	}
	if sp.Passes != 3 || !(sp.SweepMin <= sp.SweepMedian && sp.SweepMedian <= sp.SweepMax) || sp.SweepMin <= 0 ||
		!(sp.RatioMin <= sp.RatioMedian && sp.RatioMedian <= sp.RatioMax) || sp.RawScanMin <= 0 ||
		*sp.SweepUsMin > *s.SweepUs || *s.SweepUs > *sp.SweepUsMax || *sp.RawScanUsMin > *s.RawScanUs {
		t.Errorf("sweep spread %+v", sp)
	}
	if rep.Sweep != sp.SweepMedian || rep.RawScan != sp.RawScanMedian || rep.SweepVsRawScan != rep.Sweep/rep.RawScan {
		t.Errorf("sweep %v, raw SCAN %v, ratio %v: not the medians", rep.Sweep, rep.RawScan, rep.SweepVsRawScan)
	}
	d := rep.Discover
	eq("discover server µs", d.ServerUsVsSweep, d.DiscoverServerUs, d.SweepServerUs)
}

// checkDocumented checks that the JSON's fields are the ones docs/benchmarks.md tables, and that
// every field that is never left out is there.
func checkDocumented(t *testing.T, out []byte) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	start, end := bytes.Index(doc, []byte("<!-- json fields -->")), bytes.Index(doc, []byte("<!-- /json fields -->"))
	if start < 0 || end < start {
		t.Fatal("docs/benchmarks.md has no table of the JSON's fields")
	}
	documented := map[string]bool{} // the names in the first cell of each row
	for _, row := range regexp.MustCompile(`(?m)^\|([^|]*)\|`).FindAllSubmatch(doc[start:end], -1) {
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllSubmatch(row[1], -1) {
			documented[string(m[1])] = true
		}
	}
	fields, always := map[string]bool{}, map[string]bool{}
	jsonFields(reflect.TypeFor[Report](), "", fields, always)
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for id := range got["server_time"].(map[string]any) {
		fields["server_time."+id] = true
	}
	for f := range fields {
		if !documented[f] {
			t.Errorf("the JSON's %s is not in docs/benchmarks.md", f)
		}
	}
	for f := range documented {
		if !fields[f] {
			t.Errorf("docs/benchmarks.md documents %s, which the JSON has not", f)
		}
	}
	for f := range always {
		if !strings.Contains(f, ".") {
			if _, ok := got[f]; !ok {
				t.Errorf("the JSON has no %s", f)
			}
		}
	}
}

// jsonFields adds the JSON names of t's fields to fields (nested ones as parent.name, a slice's
// elements' as parent[].name, a map's values' as parent.*.name), and to always those that are
// never left out.
func jsonFields(t reflect.Type, prefix string, fields, always map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for f := range t.Fields() {
		if f.Anonymous {
			jsonFields(f.Type, prefix, fields, always)
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		name = prefix + name
		fields[name] = true
		if !strings.Contains(opts, "omitempty") {
			always[name] = true
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			jsonFields(ft, name+".", fields, always)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			jsonFields(ft.Elem(), name+"[].", fields, always)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() != reflect.Float64:
			jsonFields(ft.Elem(), name+".*.", fields, always)
		}
	}
}

// TestRunCancelled stops a run in its console step, which would otherwise poll for an hour: Run
// must end with the cancellation, with the server's settings and its own server cleaned up.
func TestRunCancelled(t *testing.T) {
	redistest.Binary(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	log := &lines{when: "the console at its defaults", on: cancel}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Options{Events: 2000, Keys: 2000, LoadFor: time.Hour, Log: log, Defaults: config.Builtin(redistest.Shipped(t))})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || log.called.IsZero() {
			t.Fatalf("Run ended with %v; want it cancelled in the console's step:\n%s", err, log.String())
		}
		// The error names the step, which is the console's.
		m := regexp.MustCompile(fmt.Sprintf(`^bench: stopped in step (\d+) of %d: `, steps(true, 3))).FindStringSubmatch(err.Error())
		if m == nil || !regexp.MustCompile(`bench: `+m[1]+`/\d+ \d+s: the console at its defaults`).MatchString(log.String()) {
			t.Errorf("Run ended with %q:\n%s", err, log.String())
		}
	case <-time.After(time.Minute): // a run that ignores ctrl+c would poll for an hour
		t.Fatalf("Run still running a minute after it was cancelled:\n%s", log.String())
	}
}
