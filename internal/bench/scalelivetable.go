package bench

import (
	"fmt"
	"io"
	"math"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// writeLiveRate prints the live measure, or why there is none: liveFamily's polls' rates and
// totals now, then the trials of every family written into.
func writeLiveRate(out io.Writer, sv *ScaleServer) {
	lr := sv.LiveRate
	if lr == nil {
		fmt.Fprintf(out, "live rate: %s\n", sv.LiveRateUnknown)
		return
	}
	fmt.Fprintf(out, "live rate: %s events/s asked into the %s keys of %s hour %s, and %s into each trial family's; "+
		"true %s/s over %.0f s after %.0f s, %s events by the writer's count\n",
		format.Commas(int64(lr.AskedPerSec)), format.Commas(int64(lr.Keys)), lr.Family, lr.Window, format.Commas(int64(lr.Trials.TrialPerSec)),
		format.Commas(int64(math.Round(lr.TruePerSec))), lr.Seconds, lr.WarmupSeconds, format.Commas(lr.Events))
	fmt.Fprintf(out, "  %d polls, %d keys read a poll, %.1f%% of the keys swept since the hour began at the last\n",
		lr.Polls, lr.KeysRead, 100*lr.Swept)
	if lr.MedianPerSec == nil {
		fmt.Fprintf(out, "  rate: none shown (%s)\n", lr.Note)
	} else {
		fmt.Fprintf(out, "  rate: ≈%s/s median of %d polls with one, %s–%s, %s; ±%.1f%% median 95%% interval; "+
			"%d of %d intervals held the true rate (%s); rates over %.1f s\n",
			format.Commas(int64(math.Round(*lr.MedianPerSec))), lr.WithRate, format.Commas(int64(math.Round(*lr.MinPerSec))),
			format.Commas(int64(math.Round(*lr.MaxPerSec))), errorCell(lr.RelError), 100**lr.HalfWidth, lr.Inside, lr.WithRate,
			pctCell(scaled(lr.HitRate)), lr.SpanSeconds)
	}
	if lr.TotalHitRate == nil {
		fmt.Fprintf(out, "  this hour now: none shown\n")
	} else {
		fmt.Fprintf(out, "  this hour now: ±%.2f%% median 95%% interval; %d of %d intervals held the true total (%s)\n",
			100**lr.TotalHalfWidth, lr.TotalInside, lr.WithTotal, pctCell(scaled(lr.TotalHitRate)))
	}
	tr := lr.Trials
	for _, s := range []struct {
		what string
		st   TrialStats
	}{{"rates", tr.Rates}, {"this hour now", tr.Totals}} {
		fmt.Fprintf(out, "  trials, %s: %d / %d of %d families held the truth (%s); median |error| %.2f%%, max %.2f%%\n", s.what,
			s.st.Inside, s.st.WithInterval, s.st.Trials, pctCell(scaled(s.st.HitRate)), 100*s.st.MedianAbsErr, 100*s.st.MaxAbsErr)
	}
}
