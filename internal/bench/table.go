package bench

import (
	"fmt"
	"hourglass/internal/format"
	"hourglass/internal/report"
	"io"
)

// WriteTable prints a report as tables: the writer cases, the other figures, and the ratios
// with their goals.
func WriteTable(out io.Writer, r *Report) {
	fmt.Fprintf(out, "hourglass bench on %s, Redis %s\n\n", r.Machine, r.RedisVersion)
	tb := report.NewTable("COUNTER WRITER", ">EVENTS/S", ">KEY PAIRS/S", ">SCRIPTS/S")
	for _, w := range r.Writer {
		tb.Row(w.Case, format.Commas(int64(w.EventsPerSec)), format.Commas(int64(w.PairsPerSec)), format.Commas(int64(w.ScriptsPerSec)))
	}
	tb.Row("go-redis alone, 1 connection, pipelines of 16, 1 pair", "", format.Commas(int64(r.BareClient)), format.Commas(int64(r.BareClient)))
	tb.Row("go-redis alone, 4 connections, pipelines of 16, 1 pair", "", format.Commas(int64(r.BareClient4)), format.Commas(int64(r.BareClient4)))
	if r.RedisBenchmark != nil {
		tb.Row("redis-benchmark -c 1 -P 16, 1 pair a call", "", format.Commas(int64(*r.RedisBenchmark)), format.Commas(int64(*r.RedisBenchmark)))
		tb.Row("redis-benchmark -c 4 -P 16, 1 pair a call", "", format.Commas(int64(*r.RedisBenchmark4)), format.Commas(int64(*r.RedisBenchmark4)))
	}
	tb.Write(out, "")
	fmt.Fprintln(out)
	tb = report.NewTable("OTHER", ">PER SECOND")
	tb.Row("sliding limiter hits (16 clients)", format.Commas(int64(r.Limiter)))
	tb.Row("delay queue tasks enqueued", format.Commas(int64(r.Enqueue)))
	tb.Row("delay queue tasks claimed and acknowledged", format.Commas(int64(r.ClaimAck)))
	tb.Row(fmt.Sprintf("sweep of %s keys (TTL and value of each)", format.Commas(int64(r.SweepKeys))), format.Commas(int64(r.Sweep)))
	tb.Row("raw SCAN of the same keys, COUNT 1000", format.Commas(int64(r.RawScan)))
	tb.Write(out, "")
	fmt.Fprintln(out)
	tb = report.NewTable("RATIO", ">MEASURED", ">GOAL")
	if r.WriterVsRedisBenchmark != nil {
		times := func(v *float64) string { return fmt.Sprintf("%.2f×", *v) }
		tb.Row("writer, 32 pairs a call ÷ redis-benchmark, 1 connection (key pairs/s)", times(r.WriterVsRedisBenchmark), "≥ 2×")
		tb.Row("writer, 32 pairs a call ÷ redis-benchmark, 4 connections", times(r.WriterVsRedisBenchmark4), "≥ 2×")
		tb.Row("writer, 1 pair a call ÷ redis-benchmark, 1 connection", times(r.SinglePairVsRedisBenchmark), "≥ 0.9×")
		tb.Row("writer, 1 pair a call ÷ redis-benchmark, 4 connections", times(r.SinglePairVsRedisBenchmark4), "≥ 0.9×")
		tb.Row("go-redis alone ÷ redis-benchmark, 1 connection (the client's ceiling)", times(r.BareClientVsRedisBenchmark), "")
		tb.Row("go-redis alone ÷ redis-benchmark, 4 connections", times(r.BareClientVsRedisBenchmark4), "")
	} else {
		tb.Row("writer ÷ redis-benchmark", "skipped: "+r.RedisBenchmarkSkipped, "")
	}
	tb.Row("Zipf events ÷ script calls (pre-aggregation)", fmt.Sprintf("%.0f×", r.ZipfEventsPerScript), "≥ 10×")
	tb.Row("sweep ÷ raw SCAN (keys/s)", fmt.Sprintf("%.2f×", r.SweepVsRawScan), "≥ 0.45×")
	tb.Row("Redis CPU a console adds polling 10,000 idle keys, default refresh", fmt.Sprintf("%.2f%%", r.ConsoleCPU), "< 1%")
	tb.Row("  (Redis CPU with nobody asking, not counted above)", fmt.Sprintf("%.2f%%", r.IdleCPU), "")
	tb.Write(out, "")
	if r.Discover != nil {
		fmt.Fprintln(out)
		writeDiscover(out, r.Discover, r.DiscoverVsSweep)
	}
}

// writeDiscover prints the discover case: speed beside a configured sweep, the heap it holds, and
// its budget.
func writeDiscover(out io.Writer, d *DiscoverReport, vsSweep float64) {
	keys := func(v float64) string { return format.Commas(int64(v)) + " keys/s" }
	ns := func(v float64) string { return fmt.Sprintf("%.2f µs", v/1000) }
	tb := report.NewTable(fmt.Sprintf("DISCOVER: %s KEYS, %d GROUPS", format.Commas(int64(d.Keys)), d.Groups), ">MEASURED", ">GOAL")
	tb.Row("sweep, a config claims every key (TTL and value of each)", keys(d.Sweep), "")
	tb.Row("  Redis CPU a key", ns(d.SweepRedisNs), "")
	tb.Row("the same keys, no config: each counted into its group, a few read", keys(d.Discover), "")
	tb.Row("  Redis CPU a key", ns(d.DiscoverRedisNs), "")
	tb.Row("raw SCAN of the same keys, COUNT 1000", keys(d.RawScan), "")
	tb.Row("no config ÷ config (time)", fmt.Sprintf("%.2f×", vsSweep), "≤ 1.5×")
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
