package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// The live estimates: each counter family's rate and current window's total, read again at every
// poll from a sample of the window's keys (and scaled to the whole window while a first sweep is
// under way). They are estimates, and named so, each with its 95% interval's bounds as series of
// their own, apart from the exact family series a complete sweep gives: a series never moves
// from an estimate to an exact figure, and a dashboard has a rate between sweeps on millions of
// keys. A figure the live read could not give soundly (too few writes seen, traffic held by a few
// keys on a keyspace barely swept, a lower bound when DBSIZE is refused) has no series.
var (
	descLiveRate = prometheus.NewDesc("hourglass_live_rate_estimate_per_second",
		"Estimated growth a second of a counter family's current window (the hour, else the day), from its live reads: a sample's estimate, not an exact count.",
		[]string{"family", "granularity"}, nil)
	descLiveRateLow = prometheus.NewDesc("hourglass_live_rate_estimate_low_per_second",
		"Low end of the 95% interval of hourglass_live_rate_estimate_per_second.", []string{"family", "granularity"}, nil)
	descLiveRateHigh = prometheus.NewDesc("hourglass_live_rate_estimate_high_per_second",
		"High end of the 95% interval of hourglass_live_rate_estimate_per_second.", []string{"family", "granularity"}, nil)
	descLiveTotal = prometheus.NewDesc("hourglass_live_window_value_estimate",
		"Estimated sum of a counter family's current window now, from its live reads: a sample's estimate, not an exact count.",
		[]string{"family", "granularity"}, nil)
	descLiveTotalLow = prometheus.NewDesc("hourglass_live_window_value_estimate_low",
		"Low end of the 95% interval of hourglass_live_window_value_estimate.", []string{"family", "granularity"}, nil)
	descLiveTotalHigh = prometheus.NewDesc("hourglass_live_window_value_estimate_high",
		"High end of the 95% interval of hourglass_live_window_value_estimate.", []string{"family", "granularity"}, nil)
	descLiveCoverage = prometheus.NewDesc("hourglass_live_estimate_coverage",
		"Share of a counter family's current window the live estimates rest on: the keys read of the window's, or while a first sweep is under way the keys swept since the window began; 1 when exact.",
		[]string{"family", "granularity"}, nil)
	descLiveReadAt = prometheus.NewDesc("hourglass_live_estimate_read_timestamp_seconds",
		"When the live estimates of a counter family were read, Unix seconds: families take turns on a tight budget.",
		[]string{"family", "granularity"}, nil)
)

// collectLive writes each family's live estimates.
func collectLive(gauge gaugeFunc, live []snapshot.LiveFamily) {
	for _, lf := range live {
		if lf.Partial || lf.Total == nil && lf.RatePerSec == nil {
			continue
		}
		labels := []string{lf.Family, lf.Granularity}
		if r := lf.RatePerSec; r != nil {
			gauge(descLiveRate, r.Estimate, labels...)
			gauge(descLiveRateLow, r.Low, labels...)
			gauge(descLiveRateHigh, r.High, labels...)
		}
		var cover float64
		if r := lf.RatePerSec; r != nil {
			cover = r.Coverage
		}
		if t := lf.Total; t != nil {
			gauge(descLiveTotal, t.Estimate, labels...)
			gauge(descLiveTotalLow, t.Low, labels...)
			gauge(descLiveTotalHigh, t.High, labels...)
			cover = t.Coverage
		}
		if lf.Swept > 0 && lf.Swept < 1 {
			cover = lf.Swept
		}
		gauge(descLiveCoverage, cover, labels...)
		gauge(descLiveReadAt, float64(lf.ReadAt.UnixNano())/1e9, labels...)
	}
}
