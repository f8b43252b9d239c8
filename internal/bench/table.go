package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/report"
	"github.com/hourglass-dev/hourglass/store"
)

// Cells of the tables: a figure, or "unknown" when it was not measured (the reason is printed
// under the tables).
func usCell(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f µs", *v)
}

func timesCell(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f×", *v)
}

func longestCell(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return "≤ " + format.Commas(int64(*v)) + " µs"
}

func metCell(v *bool) string {
	switch {
	case v == nil:
		return "unknown"
	case *v:
		return "yes"
	}
	return "no"
}

func rateCell(v float64) string { return format.Commas(int64(v)) }

// WriteTable prints a report as tables: the writer cases, the other cases, the sweep's passes,
// the console's and serve's load, the goals, and discover.
func WriteTable(out io.Writer, r *Report) {
	run := "default run"
	if r.Full {
		run = "--full run"
	}
	fmt.Fprintf(out, "hourglass bench on %s, Redis %s\n%s: %s events a writer case, %s keys swept; %.0f s\n\n", r.Machine,
		r.RedisVersion, run, format.Commas(int64(r.Events)), format.Commas(int64(r.SweepKeys)), r.Seconds)
	writeWriter(out, r)
	fmt.Fprintln(out)
	tb := report.NewTable("OTHER", ">PER SECOND", ">SERVER TIME", ">LONGEST CALL")
	tb.Row("sliding limiter hits (16 clients)", rateCell(r.Limiter), usCell(r.LimiterUs)+" a hit", longest(r, "limiter"))
	tb.Row("delay queue tasks enqueued (100 a call)", rateCell(r.Enqueue), usCell(r.EnqueueUs)+" a task", longest(r, "delay_queue_enqueue"))
	tb.Row("delay queue tasks claimed, then acknowledged", rateCell(r.ClaimAck), "", "")
	tb.Row("  claimed (100 a call)", "", usCell(r.ClaimUs)+" a task", longest(r, "delay_queue_claim"))
	tb.Row("  acknowledged (100 a call)", "", usCell(r.AckUs)+" a task", longest(r, "delay_queue_ack"))
	if bl := r.Bloom; bl != nil {
		each := fmt.Sprintf(" (%d a call, %d hashes)", store.BloomBatch, bl.Hashes)
		tb.Row("bloom filter elements added"+each, rateCell(bl.Add), usCell(bl.AddUs)+" an element", longest(r, "bloom_add"))
		tb.Row("  raw SETBIT script, same positions", "", usCell(bl.RawSetUs)+" an element", longest(r, "bloom_raw_setbit"))
		tb.Row("bloom filter elements checked (half added)", rateCell(bl.Check), usCell(bl.CheckUs)+" an element", longest(r, "bloom_check"))
		tb.Row("  raw GETBIT script, same positions", "", usCell(bl.RawGetUs)+" an element", longest(r, "bloom_raw_getbit"))
		tb.Row("  add / raw SETBIT, check / raw GETBIT", "", timesCell(bl.AddVsRaw)+", "+timesCell(bl.CheckVsRaw), "")
	}
	tb.Write(out, "")
	fmt.Fprintln(out)
	writeSweep(out, r)
	fmt.Fprintln(out)
	writeLoad(out, r)
	fmt.Fprintln(out)
	writeGoals(out, r)
	if r.Discover != nil {
		fmt.Fprintln(out)
		writeDiscover(out, r.Discover, r.DiscoverVsSweep)
	}
	if r.ServerTimeUnknown != "" {
		fmt.Fprintf(out, "\nserver time unknown: %s\n", r.ServerTimeUnknown)
	}
	if r.RedisBenchmarkSkipped != "" {
		fmt.Fprintf(out, "\nredis-benchmark skipped: %s\n", r.RedisBenchmarkSkipped)
	}
}

// longest is a case's longest-call bound.
func longest(r *Report, id string) string {
	st := r.ServerTime[id]
	if st == nil {
		return "unknown"
	}
	return longestCell(st.LongestAtMost)
}

// writeWriter prints the writer's cases beside go-redis alone and redis-benchmark.
func writeWriter(out io.Writer, r *Report) {
	tb := report.NewTable("COUNTER WRITER", "KEYS", ">EVENTS/S", ">KEY PAIRS/S", ">SCRIPTS/S", ">SERVER µs/PAIR", ">LONGEST CALL")
	for _, w := range r.Writer {
		tb.Row(w.Case, w.Keys, rateCell(w.EventsPerSec), rateCell(w.PairsPerSec), rateCell(w.ScriptsPerSec),
			usCell(w.ServerUsPerPair), longestCell(w.LongestCallUs))
	}
	for _, f := range r.Floors {
		tb.Row(f.Case, "steady", "", rateCell(f.PairsPerSec), rateCell(f.ScriptsPerSec), usCell(f.ServerUsPair), longestCell(f.LongestCallUs))
	}
	for _, c := range []struct {
		name string
		rate float64
		us   *float64
		id   string
	}{
		{"go-redis alone, 1 connection, pipelines of 16, 1 pair", r.BareClient, r.BareC1, "bare_client_c1"},
		{"go-redis alone, 4 connections, pipelines of 16, 1 pair", r.BareClient4, r.BareC4, "bare_client_c4"},
	} {
		tb.Row(c.name, "fresh", "", rateCell(c.rate), rateCell(c.rate), usCell(c.us), longest(r, c.id))
	}
	for _, c := range []struct {
		name, keys string
		rate, us   *float64
		id         string
	}{
		{"redis-benchmark -c 1 -P 16, 1 pair a call", "fresh", r.RedisBenchmark, r.RBFreshC1, "redis_benchmark_fresh_c1"},
		{"redis-benchmark -c 4 -P 16, 1 pair a call", "fresh", r.RedisBenchmark4, r.RBFreshC4, "redis_benchmark_fresh_c4"},
		{"redis-benchmark -c 1 -P 16, 1 pair a call", "steady", r.RedisBenchmarkSteady, r.RBSteadyC1, "redis_benchmark_steady_c1"},
		{"redis-benchmark -c 4 -P 16, 1 pair a call", "steady", r.RedisBenchmarkSteady4, r.RBSteadyC4, "redis_benchmark_steady_c4"},
	} {
		if c.rate == nil {
			tb.Row(c.name, c.keys, "", "skipped", "", "", "")
			continue
		}
		tb.Row(c.name, c.keys, "", rateCell(*c.rate), rateCell(*c.rate), usCell(c.us), longest(r, c.id))
	}
	tb.Write(out, "")
	if n := r.SteadyRounds; n > 1 {
		fmt.Fprintf(out, "keys there: %d rounds of the writer and its floors in turn, %s events each; rates over all, Redis' time the least round's\n",
			n, format.Commas(int64(max(r.Events/n, 1))))
	}
}

// writeSweep prints the sweep's passes beside raw SCAN's: min, median and max; then what the
// sweep asked of SCAN, and the longest calls.
func writeSweep(out io.Writer, r *Report) {
	s := r.SweepSpread
	tb := report.NewTable(fmt.Sprintf("SWEEP OF %s KEYS BESIDE RAW SCAN AND THE READ FLOOR, %d PASSES EACH IN TURN", format.Commas(int64(r.SweepKeys)), s.Passes),
		">MIN", ">MEDIAN", ">MAX")
	tb.Row("sweep (TTL and value of each), keys/s", rateCell(s.SweepMin), rateCell(s.SweepMedian), rateCell(s.SweepMax))
	tb.Row("raw SCAN at the sweep's mean COUNT, keys/s", rateCell(s.RawScanMin), rateCell(s.RawScanMedian), rateCell(s.RawScanMax))
	tb.Row("sweep ÷ the raw SCAN after it, keys/s", fmt.Sprintf("%.2f×", s.RatioMin), fmt.Sprintf("%.2f×", s.RatioMedian), fmt.Sprintf("%.2f×", s.RatioMax))
	tb.Row("sweep, server time a key", usCell(s.SweepUsMin), usCell(r.SweepUs), usCell(s.SweepUsMax))
	tb.Row("raw SCAN, server time a key", usCell(s.RawScanUsMin), usCell(r.RawScanUs), usCell(s.RawScanUsMax))
	tb.Row("sweep ÷ the raw SCAN after it, server time a key", timesCell(s.UsRatioMin), timesCell(s.UsRatioMedian), timesCell(s.UsRatioMax))
	f := r.ReadFloorFigures
	tb.Row("read floor (SCAN, then the page's PTTLs and MGETs), server time a key", usCell(f.ReadFloorUsMin), usCell(f.ReadFloorUs), usCell(f.ReadFloorUsMax))
	tb.Row("sweep ÷ the read floor after it, server time a key", timesCell(f.SweepVsReadFloorMin), timesCell(f.SweepVsReadFloor),
		timesCell(f.SweepVsReadFloorMax))
	tb.Row("sweep, Redis main thread's CPU a key", usCell(s.SweepCPUMin), usCell(s.SweepCPUMedian), usCell(s.SweepCPUMax))
	tb.Row("sweep, SCAN's COUNT (the median of the passes' means)", format.Commas(int64(s.CountMin)), format.Commas(int64(s.CountMedian)),
		format.Commas(int64(s.CountMax)))
	tb.Write(out, "")
	fmt.Fprintf(out, "[scan] max_call %s µs; the sweep's round trips (upper bounds of Redis' time): longest SCAN %s µs, longest page of reads %s µs; the fewest keys an MGET was given %d (at most 100)\n",
		format.Commas(int64(s.MaxCallUs)), format.Commas(int64(s.ClientLongestScanUs)), format.Commas(int64(s.ClientLongestReadUs)), s.ChunkMin)
	longest := "unknown"
	if r.SweepLongestUs != nil {
		longest = format.Commas(int64(*r.SweepLongestUs)) + " µs"
		if r.SweepLongestCommand != "" {
			longest += " (" + r.SweepLongestCommand + ")"
		}
	}
	if r.SweepCalls != nil && r.SweepCallsOver != nil {
		longest += fmt.Sprintf("; %s of %s calls over %s µs", format.Commas(*r.SweepCallsOver), format.Commas(*r.SweepCalls),
			format.Commas(goalSweepLongestUs))
	}
	fmt.Fprintf(out, "longest sweep call: %s; %s\n", longest, r.SweepLongestFrom)
	raw := "unknown"
	if r.RawScanLongestUs != nil {
		raw = format.Commas(int64(*r.RawScanLongestUs)) + " µs"
	}
	fmt.Fprintf(out, "longest raw SCAN call: %s; %s\n", raw, r.RawScanLongestFrom)
	if f.SweepByCommand != nil && f.ReadFloorByCommand != nil {
		fmt.Fprintf(out, "server time a key by command, all passes: sweep %s; read floor %s; sweep less read floor %s\n",
			commandCells(byCommand(f.SweepByCommand), false), commandCells(byCommand(f.ReadFloorByCommand), false),
			commandCells(commandRest(f.SweepByCommand, f.ReadFloorByCommand), true))
	}
}

// commandCells lists commands' time a key ("scan 0.95, pttl 0.41 µs"), leaving out those under
// 0.005 µs either way; signed shows a + on those that add.
func commandCells(cs []commandTime, signed bool) string {
	var parts []string
	for _, c := range cs {
		if c.us > -0.005 && c.us < 0.005 {
			continue
		}
		if signed {
			parts = append(parts, fmt.Sprintf("%s %+.2f", c.name, c.us))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.2f", c.name, c.us))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ") + " µs"
}

// writeLoad prints what a console and serve cost the server at the defaults.
func writeLoad(out io.Writer, r *Report) {
	pct := func(v *float64) string {
		if v == nil {
			return "unknown"
		}
		return fmt.Sprintf("%.2f%%", *v)
	}
	tb := report.NewTable(fmt.Sprintf("AT THE DEFAULTS, ON %s KEYS", format.Commas(int64(r.ConsoleKeys))), ">SERVER TIME", ">REDIS CPU")
	tb.Row("console (a poll every refresh, sweeping all of it)", pct(r.ConsoleShare), fmt.Sprintf("%.2f%%", r.ConsoleCPU))
	tb.Row("serve (polling as the console does)", pct(r.ServeShare), fmt.Sprintf("%.2f%%", r.ServeCPU))
	tb.Row("  (Redis with nobody asking, not counted above)", "", fmt.Sprintf("%.2f%%", r.IdleCPU))
	tb.Write(out, "")
}

// writeGoals prints the goals on Redis' own time, then the wall-clock ratios, which have none.
func writeGoals(out io.Writer, r *Report) {
	s, g := r.ServerFigures, r.Goals
	tb := report.NewTable("GOAL", ">MEASURED", ">GOAL", ">MET")
	f := r.FloorFigures
	tb.Row("writer ÷ INCRBY and PEXPIREAT NX floor, server µs/pair, keys there, 1 connection", timesCell(f.WriterSteadyC1VsExpiryFloor),
		fmt.Sprintf("≤ %.2f×", goalExpiryFloor), metCell(g.WriterSteadyC1VsExpiryFloor))
	tb.Row("writer ÷ INCRBY and PEXPIREAT NX floor, server µs/pair, keys there, 4 connections", timesCell(f.WriterSteadyC4VsExpiryFloor),
		fmt.Sprintf("≤ %.2f×", goalExpiryFloor), metCell(g.WriterSteadyC4VsExpiryFloor))
	tb.Row("sweep ÷ read floor at the same COUNT, server time a key (median of the passes)", timesCell(r.SweepVsReadFloor),
		fmt.Sprintf("≤ %.2f×", goalReadFloor), metCell(g.SweepVsReadFloor))
	tb.Row("writer ÷ redis-benchmark, server µs/pair, fresh keys, 1 connection", timesCell(s.WriterFreshC1VsRB),
		fmt.Sprintf("≤ %.2f×", goalFresh), metCell(g.WriterFreshC1))
	tb.Row("writer ÷ redis-benchmark, server µs/pair, fresh keys, 4 connections", timesCell(s.WriterFreshC4VsRB),
		fmt.Sprintf("≤ %.2f×", goalFresh), metCell(g.WriterFreshC4))
	sweepLongest := "unknown"
	if v := s.SweepLongestUs; v != nil {
		sweepLongest = format.Commas(int64(*v)) + " µs"
		if !s.SweepLongestExact {
			sweepLongest = "≤ " + sweepLongest
		}
	}
	tb.Row("sweep, longest call", sweepLongest, fmt.Sprintf("≤ %s µs", format.Commas(goalSweepLongestUs)), metCell(g.SweepLongest))
	tb.Row("writer ÷ INCRBY-only floor, server µs/pair, keys there, 1 connection", timesCell(f.WriterSteadyC1VsFloor), "", "")
	tb.Row("writer ÷ INCRBY-only floor, server µs/pair, keys there, 4 connections", timesCell(f.WriterSteadyC4VsFloor), "", "")
	tb.Row("sweep ÷ raw SCAN, keys/s (median of the passes)", fmt.Sprintf("%.2f×", r.SweepSpread.RatioMedian), "", "")
	tb.Row("sweep, server time a key (median of the passes)", usCell(s.SweepUs), "", "")
	tb.Row("sweep ÷ raw SCAN at the same COUNT, server time a key (median of the passes)", timesCell(r.SweepSpread.UsRatioMedian), "", "")
	tb.Row("INCRBY and PEXPIREAT NX floor ÷ INCRBY-only floor, 1 connection", timesCell(f.ExpiryFloorC1VsFloor), "", "")
	tb.Row("INCRBY and PEXPIREAT NX floor ÷ INCRBY-only floor, 4 connections", timesCell(f.ExpiryFloorC4VsFloor), "", "")
	tb.Row("INCRBY-only floor ÷ redis-benchmark, server µs/pair, keys there, 1 connection", timesCell(f.IncrbyFloorC1VsRB), "", "")
	tb.Row("INCRBY-only floor ÷ redis-benchmark, server µs/pair, keys there, 4 connections", timesCell(f.IncrbyFloorC4VsRB), "", "")
	tb.Row("writer ÷ redis-benchmark, server µs/pair, keys there, 1 connection", timesCell(s.WriterSteadyC1VsRB), "", "")
	tb.Row("writer ÷ redis-benchmark, server µs/pair, keys there, 4 connections", timesCell(s.WriterSteadyC4VsRB), "", "")
	tb.Row("writer, 1 pair a call ÷ redis-benchmark, server µs/pair, 1 connection", timesCell(s.SinglePairC1VsRB), "", "")
	tb.Row("writer, 1 pair a call ÷ redis-benchmark, server µs/pair, 4 connections", timesCell(s.SinglePairC4VsRB), "", "")
	tb.Row("sweep ÷ raw SCAN, server µs a key (the medians' ratio)", timesCell(s.SweepUsVsRawScan), "", "")
	tb.Row("wall clock:", "", "", "")
	tb.Row("  writer, 32 pairs a call ÷ redis-benchmark, key pairs/s, 1 connection", timesCell(r.WriterVsRedisBenchmark), "", "")
	tb.Row("  writer, 32 pairs a call ÷ redis-benchmark, key pairs/s, 4 connections", timesCell(r.WriterVsRedisBenchmark4), "", "")
	tb.Row("  writer, 1 pair a call ÷ redis-benchmark, key pairs/s, 1 connection", timesCell(r.SinglePairVsRedisBenchmark), "", "")
	tb.Row("  writer, 1 pair a call ÷ redis-benchmark, key pairs/s, 4 connections", timesCell(r.SinglePairVsRedisBenchmark4), "", "")
	tb.Row("  go-redis alone ÷ redis-benchmark, 1 connection (the client's ceiling)", timesCell(r.BareClientVsRedisBenchmark), "", "")
	tb.Row("  go-redis alone ÷ redis-benchmark, 4 connections", timesCell(r.BareClientVsRedisBenchmark4), "", "")
	tb.Row("  Zipf events ÷ script calls (pre-aggregation)", fmt.Sprintf("%.0f×", r.ZipfEventsPerScript), "≥ 10×", "")
	tb.Row("  sweep ÷ raw SCAN, keys/s (the medians' ratio)", fmt.Sprintf("%.2f×", r.SweepVsRawScan), "", "")
	tb.Write(out, "")
}

// writeDiscover prints the discover case: speed beside a configured sweep, the heap it holds, and
// its budget.
func writeDiscover(out io.Writer, d *DiscoverReport, vsSweep float64) {
	keys := func(v float64) string { return format.Commas(int64(v)) + " keys/s" }
	ns := func(v float64) string { return fmt.Sprintf("%.2f µs", v/1000) }
	tb := report.NewTable(fmt.Sprintf("DISCOVER: %s KEYS, %d GROUPS", format.Commas(int64(d.Keys)), d.Groups), ">MEASURED", ">GOAL")
	tb.Row("sweep, a config claims every key (TTL and value of each)", keys(d.Sweep), "")
	tb.Row("  Redis CPU a key", ns(d.SweepRedisNs), "")
	tb.Row("  server time a key (its commands)", usCell(d.SweepServerUs), "")
	tb.Row("the same keys, no config: each counted into its group, a few read", keys(d.Discover), "")
	tb.Row("  Redis CPU a key", ns(d.DiscoverRedisNs), "")
	tb.Row("  server time a key (its commands)", usCell(d.DiscoverServerUs), "")
	tb.Row("raw SCAN of the same keys, COUNT 1000", keys(d.RawScan), "")
	tb.Row("no config ÷ config (time)", fmt.Sprintf("%.2f×", vsSweep), "≤ 1.5×")
	tb.Row("no config ÷ config (server time a key)", timesCell(d.ServerUsVsSweep), "")
	tb.Row(fmt.Sprintf("no config, held to a budget of %s keys/s", format.Commas(int64(d.Budget))), keys(d.Budgeted),
		"≤ "+keys(float64(d.Budget)*d.BudgetTolerance))
	for _, h := range d.Heap {
		tb.Row(fmt.Sprintf("Go heap the sweep holds: %s keys, %s groups", format.Commas(int64(h.Keys)), format.Commas(int64(h.Groups))),
			format.BytesIEC(h.Bytes), "")
	}
	tb.Row("  10× the keys in as many groups ÷ 1×", fmt.Sprintf("%.2f×", d.HeapKeysRatio), "≈ 1×")
	tb.Row("  a group adds", format.Commas(int64(d.HeapPerGroup))+" B", "")
	tb.Write(out, "")
}
