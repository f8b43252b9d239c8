package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// collector exports the latest status on every scrape, so a scrape never waits on Redis. It holds a
// pointer to a Snapshot no one changes after it is made. It makes the series from it once, and
// again when a poll brings the same sweep's Snapshot with its rates measured again.
//
// A series the previous snapshot gave and the current one does not is exported at 0 while the
// current snapshot is the latest. Examples are a queue a pattern no longer finds, or a window
// emptied. The next snapshot drops it, so Prometheus sees it fall to 0 before it ends. emptiedValue
// says where the unclaimed keys' series differ.
type collector struct {
	now func() time.Time

	mu     sync.Mutex
	status snapshot.Status
	err    error
	snap   *snapshot.Snapshot // the snapshot series was made from
	series []series           // snap's series, then those of the one before that snap lacks, at 0
	own    int                // how many of series are snap's own
}

// newCollector returns a collector that ages snapshots by now (the server's clock).
func newCollector(now func() time.Time) *collector {
	if now == nil {
		now = time.Now
	}
	return &collector{now: now}
}

// set keeps the latest poll: its status, or only its error when it brought no snapshot.
func (c *collector) set(st snapshot.Status, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil || st.Snapshot != nil {
		c.status = st
	}
	c.err = err
	switch s := c.status.Snapshot; {
	case s == nil || s == c.snap:
	case c.snap != nil && s.TakenAt.Equal(c.snap.TakenAt):
		// The same sweep, its rates measured again at this poll: its series are made again,
		// and those the sweep before gave and it lacks stay at 0 while it is the latest.
		own := snapshotSeries(s)
		c.series, c.own = append(own, c.series[c.own:]...), len(own)
		c.snap = s
	default:
		c.series, c.own = withEmptied(snapshotSeries(s), c.series[:c.own], emptiedValue(s))
		c.snap = s
	}
}

// withEmptied appends to cur the series of prev that cur does not hold, each at the value emptied
// gives (0 but for the unclaimed keys' series). emptied may say to leave one out. It returns how
// many of the result are cur's own.
func withEmptied(cur, prev []series, emptied func(series) (float64, bool)) ([]series, int) {
	own := len(cur)
	have := make(map[seriesID]bool, own)
	for _, s := range cur {
		have[s.id()] = true
	}
	for _, s := range prev {
		if have[s.id()] {
			continue
		}
		if v, ok := emptied(s); ok && !s.counter { // a counter gone is absent: 0 would read as a reset
			cur = append(cur, series{desc: s.desc, value: v, labels: s.labels})
		}
	}
	return cur, own
}

var (
	descUp      = prometheus.NewDesc("hourglass_up", "1 when the last poll of Redis succeeded.", nil, nil)
	descSweepAt = prometheus.NewDesc("hourglass_last_complete_sweep_age_seconds", "Seconds since the last complete sweep ended, by the server's clock (absent until the first completes).", nil, nil)
	descOps     = prometheus.NewDesc("hourglass_redis_ops_per_second", "instantaneous_ops_per_sec from INFO, summed over masters.", nil, nil)
	descMem     = prometheus.NewDesc("hourglass_redis_used_memory_bytes", "used_memory from INFO, summed over masters.", nil, nil)
	// The figures of a sweep under way are estimates, and are withheld (a series must not jump
	// from an estimate to the exact figure, nor an alert fire on one): only its progress shows.
	descInferred      = prometheus.NewDesc("hourglass_inferred_entries", "Entries inferred from the keys, serve being given no config: counted by the sweep, or adopted too late for it and counted from the next sweep (state).", []string{"state"}, nil)
	descFirstCoverage = prometheus.NewDesc("hourglass_first_sweep_coverage", "Share of the keyspace the first sweep has swept, from DBSIZE (present until it completes, when the other series appear).", nil, nil)
)

// Describe sends nothing: the collector is unchecked, its label sets follow the config.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect writes the latest status as metrics.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	st, err, snap, ser := c.status, c.err, c.snap, c.series
	c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	up := 1.0
	if err != nil {
		up = 0
	}
	gauge(descUp, up)
	if in := st.Inferred; in != nil {
		gauge(descInferred, float64(len(in.Entries)-in.Pending), "counted")
		gauge(descInferred, float64(in.Pending), "next_sweep")
	}
	if st.Server.Err == "" && st.Server.Masters > 0 {
		gauge(descOps, float64(st.Server.OpsPerSec))
		gauge(descMem, float64(st.Server.UsedMemory))
		serverSeries(func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
		}, st.Server, st.Snapshot != nil)
	}
	collectLive(gauge, st.Families)
	if snap == nil {
		if p := st.Partial; p != nil && p.Scan.Coverage > 0 {
			gauge(descFirstCoverage, p.Scan.Coverage)
		}
		return
	}
	gauge(descSweepAt, max(c.now().Sub(snap.TakenAt).Seconds(), 0))
	for _, s := range ser {
		if s.counter {
			ch <- prometheus.MustNewConstMetric(s.desc, prometheus.CounterValue, s.value, s.labels...)
			continue
		}
		gauge(s.desc, s.value, s.labels...)
	}
}
