package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// The series a Snapshot gives. Every metric is a gauge: each value is what the last complete sweep
// found, not a count since the process started. Where a metric has a state label its states do
// not overlap: a family's hourglass_ttl_keys add up to its hourglass_family_keys, a queue's tasks
// to all its tasks, a limiter's keys to all its keys.
var (
	descSweepDur    = prometheus.NewDesc("hourglass_sweep_duration_seconds", "How long the last complete sweep took.", nil, nil)
	descSweepSeen   = prometheus.NewDesc("hourglass_sweep_keys_seen", "Keys SCAN returned in the last complete sweep.", nil, nil)
	descSweepMatch  = prometheus.NewDesc("hourglass_sweep_keys_matched", "Keys of a family or structure in the last complete sweep.", nil, nil)
	descFamilyKeys  = prometheus.NewDesc("hourglass_family_keys", "Keys of a counter family, all windows.", []string{"family"}, nil)
	descWindowValue = prometheus.NewDesc("hourglass_family_window_value", "Sum of the integer values in a counter family's current window.", []string{"family", "granularity"}, nil)
	descWindowKeys  = prometheus.NewDesc("hourglass_family_window_keys", "Keys in a counter family's current window.", []string{"family", "granularity"}, nil)
	descRate        = prometheus.NewDesc("hourglass_family_rate_per_second", "Growth a second of a counter family's current window (the hour, else the day): the slope of its total over the last minute of reads, else between the last two sweeps, else the hour's average; absent while none is known.", []string{"family"}, nil)
	descTTL         = prometheus.NewDesc("hourglass_ttl_keys", "A counter family's keys by expiry: ok, no_ttl, over_retention, expired_but_present; they add up to hourglass_family_keys.", []string{"family", "state"}, nil)
	descTTLBytes    = prometheus.NewDesc("hourglass_ttl_bytes", "Estimated memory of a counter family's keys by expiry problem: no_ttl, over_retention, expired_but_present (MEMORY USAGE sampled).", []string{"family", "state"}, nil)
	descValue       = prometheus.NewDesc("hourglass_value_keys", "A counter family's keys by value: integer, not_integer, wrong_type; they add up to hourglass_family_keys.", []string{"family", "state"}, nil)
	descValueBytes  = prometheus.NewDesc("hourglass_value_bytes", "Estimated memory of a counter family's keys by value problem: not_integer, wrong_type (MEMORY USAGE sampled).", []string{"family", "state"}, nil)
	descMismatch    = prometheus.NewDesc("hourglass_reconcile_mismatched_dims", "Dims tuples whose hours do not add up to their day.", []string{"family"}, nil)
	descLockNoTTL   = prometheus.NewDesc("hourglass_locks_no_ttl", "Locks held with no expiry.", []string{"lock"}, nil)
	descLocksHeld   = prometheus.NewDesc("hourglass_locks_held", "Locks held.", []string{"lock"}, nil)
	descDQ          = prometheus.NewDesc("hourglass_delay_queue_tasks", "A delay queue's tasks by state: not_due, due (and not claimed), in_flight, or unknown and in_flight when its scores are not due times; they add up to all its tasks.", []string{"queue", "key", "state"}, nil)
	descDQLag       = prometheus.NewDesc("hourglass_delay_queue_lag_seconds", "How long the oldest due task has waited.", []string{"queue", "key"}, nil)
	descLQ          = prometheus.NewDesc("hourglass_list_queue_tasks", "A list queue's tasks by state: queued, processing; they add up to all its tasks.", []string{"queue", "key", "state"}, nil)
	descLimKeys     = prometheus.NewDesc("hourglass_limiter_keys", "A limiter's keys by state: under_limit, at_limit, over_limit (hourglass's own limiters only: a library's keys are never over), unknown_layout; they add up to all its keys.", []string{"limiter", "state"}, nil)
	descLimHits     = prometheus.NewDesc("hourglass_limiter_hits", "Hits in the current window over a limiter's keys.", []string{"limiter"}, nil)
	descLimHour     = prometheus.NewDesc("hourglass_limiter_hour_decisions", "This hour's decisions of hourglass's limiter by outcome: allowed, rejected.", []string{"limiter", "outcome"}, nil)
	descUnique      = prometheus.NewDesc("hourglass_unique_members", "Distinct members in a unique family's current window (summed over its keys).", []string{"name", "kind", "granularity"}, nil)
	descUnion       = prometheus.NewDesc("hourglass_unique_union", "Distinct members over the last days of a unique family's busiest dims.", []string{"name", "kind", "days"}, nil)
	descMissing     = prometheus.NewDesc("hourglass_queue_missing", "1 for a configured queue key that does not exist (not an empty queue).", []string{"kind", "queue", "key"}, nil)
	descLimRefused  = prometheus.NewDesc("hourglass_limiter_refused", "Refused attempts a library's limiter keys count in their current window (limits' fixed window, rate-limiter-flexible), summed over the keys that count them; absent when none does.", []string{"limiter"}, nil)
	descJobs        = prometheus.NewDesc("hourglass_job_queue_jobs", "A job library's jobs by state, as the library counts them: waiting, active, scheduled, retry, dead, completed (a state the library does not keep for the queue is absent). queue=\"_all\" holds what the library keeps for all queues together.", []string{"entry", "layout", "queue", "state"}, nil)
	descJobsDue     = prometheus.NewDesc("hourglass_job_queue_due", "Scheduled jobs of a job library's queue that are due now.", []string{"entry", "layout", "queue"}, nil)
	descJobsLag     = prometheus.NewDesc("hourglass_job_queue_lag_seconds", "How long the oldest due scheduled job of a job library's queue has waited.", []string{"entry", "layout", "queue"}, nil)
	descJobsLatency = prometheus.NewDesc("hourglass_job_queue_latency_seconds", "How long the oldest waiting job of a job library's queue has waited, as the library defines it (absent when not known).", []string{"entry", "layout", "queue"}, nil)
	descLQLatency   = prometheus.NewDesc("hourglass_list_queue_latency_seconds", "How long a list queue's oldest task has waited, from the time its payload holds (absent when it holds none).", []string{"queue", "key"}, nil)
	descStructErr   = prometheus.NewDesc("hourglass_structure_error", "1 for a queue or unique family the last sweep could not read (its other series are left out).", []string{"kind", "name", "key"}, nil)
	descZone        = prometheus.NewDesc("hourglass_family_zone_mismatch", "1 when a counter family's hour windows look cut in another zone than its timezone (the current hour has no key, the newest is the current hour at another offset), else 0; for families with hour windows.", []string{"family"}, nil)
	descUniqueZone  = prometheus.NewDesc("hourglass_unique_zone_mismatch", "hourglass_family_zone_mismatch for a unique or bitmap family.", []string{"name", "kind"}, nil)
	descSaturated   = prometheus.NewDesc("hourglass_saturated", "1 when the series of metric for name (and granularity) is a sum past the int64 range: its value is then a bound, at least 9223372036854775807 (or at most its negative end).", []string{"metric", "name", "granularity"}, nil)
)

// saturated marks the series of metric for name (and granularity) as a bound, when it is one.
func saturated(gauge gaugeFunc, sat bool, metric, name, granularity string) {
	if sat {
		gauge(descSaturated, 1, metric, name, granularity)
	}
}

// series is one gauge (or, with counter set, one counter) with its label values.
type series struct {
	desc    *prometheus.Desc
	value   float64
	labels  []string
	counter bool
}

// id names the series among those of a snapshot: its metric and its label values.
func (s series) id() seriesID {
	return seriesID{desc: s.desc, labels: strings.Join(s.labels, "\xff")}
}

type seriesID struct {
	desc   *prometheus.Desc
	labels string
}

// gaugeFunc adds one gauge with its label values.
type gaugeFunc func(d *prometheus.Desc, v float64, labels ...string)

// snapshotSeries returns the series a snapshot gives, in a stable order.
func snapshotSeries(s *snapshot.Snapshot) []series {
	var out []series
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, series{desc: d, value: v, labels: labels})
	}
	gauge(descSweepDur, float64(s.Scan.DurationMS)/1000)
	gauge(descSweepSeen, float64(s.Scan.KeysSeen))
	gauge(descSweepMatch, float64(s.Scan.KeysMatched))
	collectCounters(gauge, s.Counters)
	collectQueues(gauge, s.DelayQueues, s.ListQueues)
	collectLimiters(gauge, s.Limiters)
	collectJobQueues(gauge, s.JobQueues)
	collectThroughput(func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, series{desc: d, value: v, labels: labels, counter: true})
	}, s.JobQueues)
	collectJobWorkers(gauge, s.JobQueues)
	collectUniques(gauge, s.Uniques)
	collectLocks(gauge, s.Locks)
	collectBlooms(gauge, s.Blooms)
	collectUnclaimed(gauge, s)
	return out
}

// collectCounters writes each counter family's keys, current windows, rate, health and
// reconciliation.
func collectCounters(gauge gaugeFunc, counters []snapshot.FamilyStats) {
	for _, f := range counters {
		gauge(descFamilyKeys, float64(f.Keys), f.Family)
		for _, g := range f.Granularities {
			var total, keys int64
			if w := f.CurrentWindow(g); w != nil {
				total, keys = w.Total, w.Keys
				saturated(gauge, w.Saturated, "hourglass_family_window_value", f.Family, g)
			}
			gauge(descWindowValue, float64(total), f.Family, g)
			gauge(descWindowKeys, float64(keys), f.Family, g)
		}
		// A family with neither (a day-only family before its reads span enough) has no series:
		// its rate is unknown, not 0.
		if r := f.RatePerSec; r != nil {
			gauge(descRate, *r, f.Family)
		} else if r := f.HourAvgPerSec; r != nil {
			gauge(descRate, *r, f.Family)
		}
		collectHealth(gauge, &f)
		if f.Reconciliation != nil {
			gauge(descMismatch, float64(f.MismatchedDims), f.Family)
		}
		if f.Has("hour") {
			gauge(descZone, flag(f.ZoneMismatch != nil), f.Family)
		}
	}
}

// flag is 1 for true, 0 for false.
func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collectHealth writes a family's keys by expiry and by value; each set of states adds up to the
// family's keys. It also writes the estimated memory of the unhealthy ones, per problem with
// sampled keys, and 0 for a problem with none.
func collectHealth(gauge gaugeFunc, f *snapshot.FamilyStats) {
	h := &f.Health
	gauge(descTTL, float64(f.TTL.OK), f.Family, "ok")
	gauge(descTTL, float64(f.TTL.NoTTL), f.Family, "no_ttl")
	gauge(descTTL, float64(f.TTL.OverRetention), f.Family, "over_retention")
	gauge(descTTL, float64(f.TTL.ExpiredButPresent), f.Family, "expired_but_present")
	gauge(descValue, float64(f.Keys-f.WrongType-f.NotInteger), f.Family, "integer")
	gauge(descValue, float64(f.NotInteger), f.Family, "not_integer")
	gauge(descValue, float64(f.WrongType), f.Family, "wrong_type")
	bytes := func(d *prometheus.Desc, p *snapshot.Problem, state string) {
		if p.Keys == 0 || p.Sampled > 0 {
			gauge(d, float64(p.Bytes), f.Family, state)
		}
	}
	bytes(descTTLBytes, &h.NoTTL, "no_ttl")
	bytes(descTTLBytes, &h.OverRetention, "over_retention")
	bytes(descTTLBytes, &h.ExpiredButPresent, "expired_but_present")
	bytes(descValueBytes, &h.NotInteger, "not_integer")
	bytes(descValueBytes, &h.WrongType, "wrong_type")
}

// collectQueues writes each delay queue's and list queue's tasks by state, or its error. A
// pattern that found no queue gives no series (its queues' series go to 0, then away).
func collectQueues(gauge gaugeFunc, delay []snapshot.DelayQueue, list []snapshot.ListQueue) {
	for _, q := range delay {
		switch {
		case queueTrouble(gauge, "delay_queue", q.Name, q.Key, q.Pattern, q.Error, q.Missing):
		case q.Due == nil: // the scores are not due times in the unit: the split is unknown
			gauge(descDQ, float64(q.Depth), q.Name, q.Key, "unknown")
			inFlight(gauge, q)
		default:
			// Depth and Due are read one after the other: a task added between can make Due
			// the larger.
			gauge(descDQ, float64(max(q.Depth-*q.Due, 0)), q.Name, q.Key, "not_due")
			gauge(descDQ, float64(*q.Due), q.Name, q.Key, "due")
			inFlight(gauge, q)
			if q.OldestDueAgeMS != nil {
				gauge(descDQLag, float64(*q.OldestDueAgeMS)/1000, q.Name, q.Key)
			}
		}
	}
	for _, q := range list {
		if !queueTrouble(gauge, "list_queue", q.Name, q.Key, q.Pattern, q.Error, q.Missing) {
			gauge(descLQ, float64(q.Length), q.Name, q.Key, "queued")
			if q.Processing != nil { // no series for a queue that keeps no processing list
				gauge(descLQ, float64(*q.Processing), q.Name, q.Key, "processing")
			}
			if q.LatencyMS != nil {
				gauge(descLQLatency, float64(*q.LatencyMS)/1000, q.Name, q.Key)
			}
		}
	}
}

// inFlight writes a delay queue's claimed tasks: no series for a queue that keeps none.
func inFlight(gauge gaugeFunc, q snapshot.DelayQueue) {
	if q.InFlight != nil {
		gauge(descDQ, float64(*q.InFlight), q.Name, q.Key, "in_flight")
	}
}

// queueTrouble writes the series of a queue that has no figures to give, and reports whether it is
// one. A pattern's row that found no queue gives no series at all. A queue that could not be read
// gives its error series, and a key that is not there its missing series.
func queueTrouble(gauge gaugeFunc, kind, name, key, pattern, failed string, missing bool) bool {
	switch {
	case pattern != "" && key == "":
	case failed != "":
		gauge(descStructErr, 1, kind, name, key)
	case missing:
		gauge(descMissing, 1, kind, name, key)
	default:
		return false
	}
	return true
}

// collectLimiters writes each limiter's keys by state, its hits and this hour's decisions.
func collectLimiters(gauge gaugeFunc, limiters []snapshot.Limiter) {
	for _, l := range limiters {
		over := int64(0)
		if l.OverLimit != nil { // a library's keys are never over: no series
			over = *l.OverLimit
			gauge(descLimKeys, float64(over), l.Name, "over_limit")
		}
		gauge(descLimKeys, float64(l.Keys-l.AtLimit-over), l.Name, "under_limit")
		gauge(descLimKeys, float64(l.AtLimit), l.Name, "at_limit")
		gauge(descLimKeys, float64(l.Unknown), l.Name, "unknown_layout")
		gauge(descLimHits, float64(l.Hits), l.Name)
		saturated(gauge, l.HitsSaturated, "hourglass_limiter_hits", l.Name, "")
		// What the limiter's keys do not keep has no series, never a 0.
		if l.RefusedInWindow != nil {
			gauge(descLimRefused, float64(*l.RefusedInWindow), l.Name)
			saturated(gauge, l.RefusedSaturated, "hourglass_limiter_refused", l.Name, "")
		}
		if l.Allowed != nil {
			gauge(descLimHour, float64(*l.Allowed), l.Name, "allowed")
		}
		if l.Rejected != nil {
			gauge(descLimHour, float64(*l.Rejected), l.Name, "rejected")
		}
	}
}

// collectJobQueues writes each job library's queues by state; the shared row ("_all") only with
// the states no queue keeps, so a sum over queues counts nothing twice.
func collectJobQueues(gauge gaugeFunc, entries []snapshot.JobQueues) {
	for _, e := range entries {
		kept := map[string]bool{}
		for _, q := range e.Queues {
			if q.Error != "" {
				gauge(descStructErr, 1, "job_queue", e.Name, q.Queue)
				continue
			}
			for _, st := range jobStates(q) {
				kept[st.state] = true
				gauge(descJobs, float64(st.n), e.Name, e.Layout, q.Queue, st.state)
			}
			jobDue(gauge, e, q, q.Queue)
			if q.LatencyMS != nil {
				gauge(descJobsLatency, float64(*q.LatencyMS)/1000, e.Name, e.Layout, q.Queue)
			}
		}
		if e.Shared == nil {
			continue
		}
		for _, st := range jobStates(*e.Shared) {
			if !kept[st.state] {
				gauge(descJobs, float64(st.n), e.Name, e.Layout, "_all", st.state)
			}
		}
		if !kept["scheduled"] {
			jobDue(gauge, e, *e.Shared, "_all")
		}
	}
}

type jobState struct {
	state string
	n     int64
}

// jobStates are a job queue's counts the library keeps, by state, in a stable order.
func jobStates(q snapshot.JobQueue) []jobState {
	var out []jobState
	for _, s := range []struct {
		state string
		p     *int64
	}{{"waiting", q.Waiting}, {"active", q.Active}, {"scheduled", q.Scheduled}, {"retry", q.Retry}, {"dead", q.Dead}, {"completed", q.Completed}} {
		if s.p != nil {
			out = append(out, jobState{s.state, *s.p})
		}
	}
	return out
}

// jobDue writes a queue's due scheduled jobs and their lag, when they could be read.
func jobDue(gauge gaugeFunc, e snapshot.JobQueues, q snapshot.JobQueue, queue string) {
	if q.Due == nil {
		return
	}
	gauge(descJobsDue, float64(*q.Due), e.Name, e.Layout, queue)
	if q.OldestDueAgeMS != nil {
		gauge(descJobsLag, float64(*q.OldestDueAgeMS)/1000, e.Name, e.Layout, queue)
	}
}

// collectUniques writes each unique family's current counts and unions, or its error.
func collectUniques(gauge gaugeFunc, uniques []snapshot.Unique) {
	for _, u := range uniques {
		if u.Error != "" {
			gauge(descStructErr, 1, u.Kind, u.Name, "")
			continue
		}
		if u.ZoneMismatch != nil || hasHours(u.Windows) {
			gauge(descUniqueZone, flag(u.ZoneMismatch != nil), u.Name, u.Kind)
		}
		for _, w := range u.Windows {
			if w.Current {
				gauge(descUnique, float64(w.Count), u.Name, u.Kind, w.Granularity)
				saturated(gauge, w.Saturated, "hourglass_unique_members", u.Name, w.Granularity)
			}
		}
		// A union not read (none to read, or skipped over the sweep's budget) has no series: never 0.
		if u.Union7d != nil {
			gauge(descUnion, float64(*u.Union7d), u.Name, u.Kind, "7")
		}
		if u.Union30d != nil {
			gauge(descUnion, float64(*u.Union30d), u.Name, u.Kind, "30")
		}
	}
}

// collectLocks writes each lock pattern's locks held, and those held with no expiry.
func collectLocks(gauge gaugeFunc, locks []snapshot.Lock) {
	for _, l := range locks {
		gauge(descLocksHeld, float64(l.Held), l.Name)
		gauge(descLockNoTTL, float64(l.NoTTL), l.Name)
	}
}

// hasHours reports whether a unique family has hour windows present.
func hasHours(ws []snapshot.UniqueWindow) bool {
	for _, w := range ws {
		if w.Granularity == "hour" {
			return true
		}
	}
	return false
}
