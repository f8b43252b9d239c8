package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/report"
)

// WriteScaleTable prints a scale report: each keyspace's load and console, the estimates of its
// main families and the trials' hit rates at each coverage, then the goals.
func WriteScaleTable(out io.Writer, r *ScaleReport) {
	fmt.Fprintf(out, "hourglass bench --scale on %s, Redis %s; %.0f s\n", r.Machine, r.RedisVersion, r.Seconds)
	fmt.Fprintf(out, "trials: %s\n", r.TrialsFrom)
	for _, sv := range r.Servers {
		fmt.Fprintln(out)
		writeScaleServer(out, &sv)
	}
	fmt.Fprintln(out)
	g := r.Goals
	tb := report.NewTable("SCALE GOAL", ">GOAL", ">MET")
	tb.Row("a console's first figures, every keyspace", fmt.Sprintf("≤ %.0f s", goalFirstFigures), metCell(g.FirstFigures))
	tb.Row("one server at 5% coverage: main families' keys and current totals", fmt.Sprintf("within ±%.0f%%", 100*goalTotalsAt5), metCell(g.TotalsAt5))
	tb.Row("trials whose 95% interval holds the exact value, each keyspace, coverage and figure", fmt.Sprintf("≥ %.0f%%", 100*goalHitRate),
		metCell(g.HitRate))
	tb.Row("one server: the console's Redis CPU over idle, at the defaults", fmt.Sprintf("< %.0f%% of a core", goalConsoleCPU), metCell(g.ConsoleCPU))
	tb.Row("one server: the console's live rate, median of its polls", fmt.Sprintf("within ±%.0f%% of the true rate", 100*goalLiveRate),
		metCell(g.LiveRate))
	tb.Row("trials whose live rate and this hour's 95% intervals hold the truth", fmt.Sprintf("≥ %.0f%%", 100*goalHitRate), metCell(g.LiveHits))
	tb.Write(out, "")
}

func writeScaleServer(out io.Writer, sv *ScaleServer) {
	what := "ONE SERVER"
	if sv.Kind == "cluster" {
		what = fmt.Sprintf("A %d-MASTER CLUSTER", sv.Masters)
	}
	fmt.Fprintf(out, "%s: %s keys, written in %.1f s (%s keys/s), %s of memory\n", what, format.Commas(sv.Keys), sv.LoadSeconds,
		format.Commas(int64(sv.LoadKeysPerSec)), format.BytesIEC(sv.UsedMemory))
	c := sv.Console
	fmt.Fprintf(out, "console at %s keys/s, max_redis_time %s, refresh %gs for %.0f s, %d polls, %s keys swept:\n",
		format.Commas(int64(c.KeysPerSecond)), strconv.FormatFloat(100*c.MaxRedisTime, 'g', 3, 64)+"%", c.RefreshSeconds, c.Seconds, c.Polls,
		format.Commas(c.KeysSwept))
	fmt.Fprintf(out, "  first figures %s (every family's %s); Redis CPU %.2f%% of a core, %.2f%% over its idle %.2f%%; server time %s\n",
		secondsCell(c.FirstFigures), secondsCell(c.AllFigures), c.CPU, c.CPUOverIdle, c.IdleCPU, pctCell(c.ServerTime))
	if len(c.ByCommand) > 0 {
		names := slices.SortedFunc(maps.Keys(c.ByCommand), func(a, b string) int { return cmp.Compare(c.ByCommand[b], c.ByCommand[a]) })
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %s µs", n, format.Commas(int64(c.ByCommand[n]))))
		}
		fmt.Fprintf(out, "  server time by command: %s\n", strings.Join(parts, ", "))
	}
	writeLiveRate(out, sv)
	tb := report.NewTable("COVERAGE", "FAMILY", "FIGURE", ">EXACT", ">ESTIMATE", ">95% INTERVAL", ">ERROR", "INSIDE")
	for _, run := range sv.Coverage {
		cov := fmt.Sprintf("%.1f%% (%.1f s)", 100*run.Coverage, run.Seconds)
		for _, f := range run.Figures {
			tb.Row(cov, f.Family, f.Figure, format.Commas(f.Exact), format.Commas(int64(math.Round(f.Estimate))), intervalCell(f),
				errorCell(f.RelError), yesNo(f.Inside))
			cov = ""
		}
	}
	tb.Write(out, "")
	fmt.Fprintln(out)
	tt := report.NewTable("COVERAGE", "TRIALS", ">INSIDE / WITH AN INTERVAL", ">HIT RATE", ">MEDIAN |ERROR|", ">MAX |ERROR|")
	for _, run := range sv.Coverage {
		cov := fmt.Sprintf("%.1f%% × %d", 100*run.Target, run.Windows)
		for _, s := range []struct {
			name string
			st   TrialStats
		}{{"keys", run.Keys}, {"current hour's total", run.Totals}, {"  hash-tagged (both)", run.Tagged}, {"  plain (both)", run.Plain}} {
			tt.Row(cov, s.name, fmt.Sprintf("%s / %s of %s", format.Commas(int64(s.st.Inside)), format.Commas(int64(s.st.WithInterval)),
				format.Commas(int64(s.st.Trials))), pctCell(scaled(s.st.HitRate)),
				fmt.Sprintf("%.2f%%", 100*s.st.MedianAbsErr), fmt.Sprintf("%.2f%%", 100*s.st.MaxAbsErr))
			cov = ""
		}
	}
	tt.Write(out, "")
}

func intervalCell(f ScaleFigure) string {
	if f.High == nil {
		return "none (so far)"
	}
	return format.Commas(int64(math.Round(f.Low))) + " – " + format.Commas(int64(math.Round(*f.High)))
}

func errorCell(v *float64) string {
	if v == nil {
		return "no estimate"
	}
	return fmt.Sprintf("%+.2f%%", 100**v)
}

func secondsCell(v *float64) string {
	if v == nil {
		return "not within the run"
	}
	return fmt.Sprintf("%.2f s", *v)
}

func pctCell(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f%%", *v)
}

func scaled(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(100 * *v)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
