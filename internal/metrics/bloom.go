package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// A Bloom filter's figures, one series per filter ([[bloom]] entry and key). A figure the sweep
// could not read (RedisBloom's bits, a memory MEMORY USAGE refused) has no series; one estimated
// from a sample of the bits is its estimate (the report and the JSON carry its interval).
var (
	bloomLabels       = []string{"bloom", "key"}
	descBloomFP       = prometheus.NewDesc("hourglass_bloom_false_positive_rate", "A Bloom filter's chance now that an element never added reads as held, from the bits its sub-filters have set (estimated past 1 MB a sub-filter; from its items for RedisBloom's, when BF.DEBUG answers).", bloomLabels, nil)
	descBloomFill     = prometheus.NewDesc("hourglass_bloom_fill_ratio", "Share of a Bloom filter's bits set, over all its sub-filters.", bloomLabels, nil)
	descBloomElements = prometheus.NewDesc("hourglass_bloom_elements", "Distinct elements a Bloom filter holds, estimated from its bits set (absent for RedisBloom's, and when a sub-filter may be full).", bloomLabels, nil)
	descBloomAdded    = prometheus.NewDesc("hourglass_bloom_added", "Adds that found the element absent, as the filter's writers count them (our metadata's added, RedisBloom's items inserted).", bloomLabels, nil)
	descBloomMemory   = prometheus.NewDesc("hourglass_bloom_memory_bytes", "MEMORY USAGE of a Bloom filter's keys (BF.INFO's size for RedisBloom's).", bloomLabels, nil)
	descBloomTarget   = prometheus.NewDesc("hourglass_bloom_target_error_rate", "The false-positive rate a Bloom filter was sized for.", bloomLabels, nil)
	descBloomOver     = prometheus.NewDesc("hourglass_bloom_over_target", "1 when a Bloom filter's false-positive rate is past its target (the low end of its interval, for an estimate).", bloomLabels, nil)
	descBloomFilters  = prometheus.NewDesc("hourglass_bloom_filters", "Bloom filters a [[bloom]] entry's pattern matched and the sweep read (state read), or did not read as filters (state unreadable).", []string{"bloom", "state"}, nil)
)

// collectBlooms writes each filter's figures, those known.
func collectBlooms(gauge gaugeFunc, blooms []snapshot.Bloom) {
	for _, b := range blooms {
		var unreadable int64
		for _, n := range b.Unreadable {
			unreadable += n
		}
		gauge(descBloomFilters, float64(len(b.Filters)), b.Name, "read")
		gauge(descBloomFilters, float64(unreadable), b.Name, "unreadable")
		for _, f := range b.Filters {
			figure := func(d *prometheus.Desc, fig *snapshot.BloomFigure) {
				if fig != nil {
					gauge(d, fig.Value, b.Name, f.Key)
				}
			}
			figure(descBloomFP, f.FalsePositive)
			figure(descBloomFill, f.Fill)
			figure(descBloomElements, f.Elements)
			if f.Added != nil {
				gauge(descBloomAdded, float64(*f.Added), b.Name, f.Key)
			}
			if f.MemoryBytes != nil {
				gauge(descBloomMemory, float64(*f.MemoryBytes), b.Name, f.Key)
			}
			if f.TargetRate != nil {
				gauge(descBloomTarget, *f.TargetRate, b.Name, f.Key)
			}
			if f.FalsePositive != nil && f.TargetRate != nil {
				over := 0.0
				if f.OverTarget {
					over = 1
				}
				gauge(descBloomOver, over, b.Name, f.Key)
			}
		}
	}
}
