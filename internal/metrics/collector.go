package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"hourglass/scanner"
)

// collector exports the latest status on every scrape. It holds a pointer to a Snapshot no one
// changes after it is made, so a scrape never waits on Redis.
type collector struct {
	now func() time.Time

	mu     sync.Mutex
	status scanner.Status
	err    error
}

// newCollector returns a collector that ages snapshots by now (the server's clock).
func newCollector(now func() time.Time) *collector { return &collector{now: now} }

// set keeps the latest poll: its status, or only its error when it brought no snapshot.
func (c *collector) set(st scanner.Status, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil || st.Snapshot != nil {
		c.status = st
	}
	c.err = err
}

var (
	descUp          = prometheus.NewDesc("hourglass_up", "1 when the last poll of Redis succeeded.", nil, nil)
	descSnapAge     = prometheus.NewDesc("hourglass_snapshot_age_seconds", "Seconds since the last complete sweep.", nil, nil)
	descSweepDur    = prometheus.NewDesc("hourglass_sweep_duration_seconds", "How long the last complete sweep took.", nil, nil)
	descSweepSeen   = prometheus.NewDesc("hourglass_sweep_keys_seen", "Keys SCAN returned in the last complete sweep.", nil, nil)
	descSweepMatch  = prometheus.NewDesc("hourglass_sweep_keys_matched", "Keys of a family or structure in the last complete sweep.", nil, nil)
	descOps         = prometheus.NewDesc("hourglass_redis_ops_per_second", "instantaneous_ops_per_sec from INFO, summed over masters.", nil, nil)
	descMem         = prometheus.NewDesc("hourglass_redis_used_memory_bytes", "used_memory from INFO, summed over masters.", nil, nil)
	descWindowTotal = prometheus.NewDesc("hourglass_counter_window_total", "The current window's total of a counter family.", []string{"family", "granularity"}, nil)
	descWindowKeys  = prometheus.NewDesc("hourglass_counter_window_keys", "Keys in the current window of a counter family.", []string{"family", "granularity"}, nil)
	descFamilyKeys  = prometheus.NewDesc("hourglass_counter_keys", "Keys of a counter family, all windows.", []string{"family"}, nil)
	descRate        = prometheus.NewDesc("hourglass_counter_rate_per_second", "Growth of the current window between sweeps (the hour's average before a second sweep).", []string{"family"}, nil)
	descTTL         = prometheus.NewDesc("hourglass_ttl_keys", "Unhealthy keys of a family by problem: no_ttl, over_retention, expired_but_present, wrong_type, not_integer.", []string{"family", "problem"}, nil)
	descTTLBytes    = prometheus.NewDesc("hourglass_ttl_bytes", "Estimated memory of a family's unhealthy keys, by problem (MEMORY USAGE sampled).", []string{"family", "problem"}, nil)
	descMismatch    = prometheus.NewDesc("hourglass_reconcile_mismatched_dims", "Dims tuples whose hours do not add up to their day.", []string{"family"}, nil)
	descLockNoTTL   = prometheus.NewDesc("hourglass_locks_no_ttl", "Locks held with no expiry.", []string{"lock"}, nil)
	descLocksHeld   = prometheus.NewDesc("hourglass_locks_held", "Locks held.", []string{"lock"}, nil)
	descDQ          = prometheus.NewDesc("hourglass_delay_queue_tasks", "Delay queue tasks by state: queued (all), due, in_flight.", []string{"queue", "key", "state"}, nil)
	descDQLag       = prometheus.NewDesc("hourglass_delay_queue_lag_seconds", "How long the oldest due task has waited.", []string{"queue", "key"}, nil)
	descLQ          = prometheus.NewDesc("hourglass_list_queue_tasks", "List queue tasks by state: queued, processing.", []string{"queue", "key", "state"}, nil)
	descLimKeys     = prometheus.NewDesc("hourglass_limiter_keys", "A limiter's keys by state: all, at_limit, over_limit.", []string{"limiter", "state"}, nil)
	descLimHits     = prometheus.NewDesc("hourglass_limiter_hits", "Hits in the current window over a limiter's keys.", []string{"limiter"}, nil)
	descLimHour     = prometheus.NewDesc("hourglass_limiter_hour_decisions", "This hour's decisions of hourglass's limiter: allowed, rejected.", []string{"limiter", "outcome"}, nil)
	descUnique      = prometheus.NewDesc("hourglass_unique_count", "A unique family's current window count (summed over its keys).", []string{"name", "kind", "granularity"}, nil)
	descStructErr   = prometheus.NewDesc("hourglass_structure_error", "1 for a queue or unique family the last snapshot could not read (its other series are left out).", []string{"kind", "name", "key"}, nil)
	descUnion       = prometheus.NewDesc("hourglass_unique_union", "Distinct members over the last days of a unique family's busiest dims.", []string{"name", "kind", "days"}, nil)
)

// Describe sends nothing: the collector is unchecked, its label sets follow the config.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect writes the latest status as metrics.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	st, err := c.status, c.err
	c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	up := 1.0
	if err != nil {
		up = 0
	}
	gauge(descUp, up)
	if st.Server.Err == "" && st.Server.Masters > 0 {
		gauge(descOps, float64(st.Server.OpsPerSec))
		gauge(descMem, float64(st.Server.UsedMemory))
	}
	s := st.Snapshot
	if s == nil {
		return
	}
	gauge(descSnapAge, c.now().Sub(s.TakenAt).Seconds())
	gauge(descSweepDur, float64(s.Scan.DurationMS)/1000)
	gauge(descSweepSeen, float64(s.Scan.KeysSeen))
	gauge(descSweepMatch, float64(s.Scan.KeysMatched))
	collectCounters(gauge, s.Counters)
	collectQueues(gauge, s.DelayQueues, s.ListQueues)
	collectLimiters(gauge, s.Limiters)
	collectUniques(gauge, s.Uniques)
	collectLocks(gauge, s.Locks)
}

// gaugeFunc sends one gauge with its label values.
type gaugeFunc func(d *prometheus.Desc, v float64, labels ...string)

// collectCounters writes each counter family's keys, current windows, rate, TTL health and
// reconciliation.
func collectCounters(gauge gaugeFunc, counters []scanner.FamilyStats) {
	for _, f := range counters {
		gauge(descFamilyKeys, float64(f.Keys), f.Family)
		for _, g := range f.Granularities {
			var total, keys int64
			if w := f.CurrentWindow(g); w != nil {
				total, keys = w.Total, w.Keys
			}
			gauge(descWindowTotal, float64(total), f.Family, g)
			gauge(descWindowKeys, float64(keys), f.Family, g)
		}
		r := f.HourAvgPerSec
		if f.RatePerSec != nil {
			r = *f.RatePerSec
		}
		gauge(descRate, r, f.Family)
		for _, p := range f.Health.Problems()[:5] {
			gauge(descTTL, float64(p.Keys), f.Family, p.Name)
			if p.Sampled > 0 {
				gauge(descTTLBytes, float64(p.Bytes), f.Family, p.Name)
			}
		}
		if f.Reconciliation != nil {
			gauge(descMismatch, float64(f.MismatchedDims), f.Family)
		}
	}
}

// collectQueues writes each delay queue's and list queue's tasks by state, or its error.
func collectQueues(gauge gaugeFunc, delay []scanner.DelayQueue, list []scanner.ListQueue) {
	for _, q := range delay {
		if q.Error != "" {
			gauge(descStructErr, 1, "delay_queue", q.Name, q.Key)
			continue
		}
		gauge(descDQ, float64(q.Depth), q.Name, q.Key, "queued")
		gauge(descDQ, float64(q.Due), q.Name, q.Key, "due")
		gauge(descDQ, float64(q.InFlight), q.Name, q.Key, "in_flight")
		gauge(descDQLag, float64(q.OldestDueAgeMS)/1000, q.Name, q.Key)
	}
	for _, q := range list {
		if q.Error != "" {
			gauge(descStructErr, 1, "list_queue", q.Name, q.Key)
			continue
		}
		gauge(descLQ, float64(q.Length), q.Name, q.Key, "queued")
		gauge(descLQ, float64(q.Processing), q.Name, q.Key, "processing")
	}
}

// collectLimiters writes each limiter's keys by state, its hits and this hour's decisions.
func collectLimiters(gauge gaugeFunc, limiters []scanner.Limiter) {
	for _, l := range limiters {
		gauge(descLimKeys, float64(l.Keys), l.Name, "all")
		gauge(descLimKeys, float64(l.AtLimit), l.Name, "at_limit")
		gauge(descLimKeys, float64(l.OverLimit), l.Name, "over_limit")
		gauge(descLimHits, float64(l.Hits), l.Name)
		gauge(descLimHour, float64(l.Allowed), l.Name, "allowed")
		gauge(descLimHour, float64(l.Rejected), l.Name, "rejected")
	}
}

// collectUniques writes each unique family's current counts and unions, or its error.
func collectUniques(gauge gaugeFunc, uniques []scanner.Unique) {
	for _, u := range uniques {
		if u.Error != "" {
			gauge(descStructErr, 1, u.Kind, u.Name, "")
			continue
		}
		for _, w := range u.Windows {
			if w.Current {
				gauge(descUnique, float64(w.Count), u.Name, u.Kind, w.Granularity)
			}
		}
		gauge(descUnion, float64(u.Union7d), u.Name, u.Kind, "7")
		gauge(descUnion, float64(u.Union30d), u.Name, u.Kind, "30")
	}
}

// collectLocks writes each lock pattern's locks held, and those held with no expiry.
func collectLocks(gauge gaugeFunc, locks []scanner.Lock) {
	for _, l := range locks {
		gauge(descLocksHeld, float64(l.Held), l.Name)
		gauge(descLockNoTTL, float64(l.NoTTL), l.Name)
	}
}
