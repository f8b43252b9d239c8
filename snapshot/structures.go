package snapshot

import "math"

// The Snapshot's sections for queues, limiters, uniques and locks. A structure that is not
// configured gives an empty list; one that could not be read says why in Error.

// DelayQueue is a delay queue now.
type DelayQueue struct {
	Name string `json:"name"`
	Key  string `json:"key"` // escaped
	// RawKey is the key's own bytes, for the console's reads and actions.
	RawKey string `json:"-"`
	// Pattern is the entry's pattern, for a queue a pattern found (or, with Key "", for a
	// pattern that found none).
	Pattern string `json:"pattern,omitempty"`
	Missing bool   `json:"missing,omitempty"` // the key is not there (a pattern: no key matches)
	Unit    string `json:"unit"`              // the unit the scores were read in (auto: the one found)
	Depth   int64  `json:"depth"`             // tasks queued, due or not
	// InFlight counts the tasks claimed and not acknowledged, in InFlightKey; null when the queue
	// keeps none (InFlightKey "": its writer removes a task when it takes it).
	InFlight    *int64 `json:"in_flight"`
	InFlightKey string `json:"in_flight_key"`
	// Due, OldestDueAgeMS, NextDueInMS and Schedule are null when the scores are not due times in
	// the unit; Warning then says what they look like. OldestDueAgeMS is the queue's lag: how long
	// the oldest due task has waited past its due time. NextDueInMS is -1 when nothing is
	// scheduled. Schedule counts the tasks not yet due by when they fall due: 1m, 10m, 1h, later.
	Due            *int64           `json:"due"`
	OldestDueAgeMS *int64           `json:"oldest_due_age_ms"`
	NextDueInMS    *int64           `json:"next_due_in_ms"`
	Schedule       map[string]int64 `json:"schedule"`
	Warning        string           `json:"warning,omitempty"`
	Error          string           `json:"error,omitempty"`
	// Ref opens the queue in the console's drill-down (zero for a pattern that found no key).
	Ref QueueRef `json:"-"`
}

// ListQueue is a list queue now.
type ListQueue struct {
	Name   string `json:"name"`
	Key    string `json:"key"` // escaped
	RawKey string `json:"-"`   // the key's own bytes

	Pattern string `json:"pattern,omitempty"`
	Missing bool   `json:"missing,omitempty"`
	Length  int64  `json:"length"`
	// Processing counts the tasks popped and not acknowledged, in ProcessingKey; null when the
	// queue keeps none (ProcessingKey "").
	Processing    *int64 `json:"processing"`
	ProcessingKey string `json:"processing_key"`
	// LatencyMS is how long the oldest task has waited, from its payload's time; null when it
	// is not known, with LatencyNote saying why.
	LatencyMS   *int64 `json:"latency_ms"`
	LatencyNote string `json:"latency_note,omitempty"`
	Error       string `json:"error,omitempty"`
	// Ref opens the queue in the console's drill-down (zero for a pattern that found no key).
	Ref QueueRef `json:"-"`
}

// Limiter is a limiter's keys now, ours or another writer's. A figure the limiter's keys do not
// keep is null, never 0: over_limit, allowed and rejected for a library's keys, refused_in_window
// for keys that do not count what they refuse.
type Limiter struct {
	Name string `json:"name"`
	// Layout is whose keys they are: hourglass, limits, rate-limiter-flexible or redis_rate
	// (read as that library answers for each key).
	Layout string `json:"layout"`
	// Kind is how the keys count: sliding or fixed for hourglass's own. For a library's, it is the
	// kinds of the keys read: fixed, moving or gcra, joined by "+" when they differ (limits' keys
	// may be of both its strategies). When no key was read, it is what the layout may hold ("fixed
	// or moving" for limits).
	Kind string `json:"kind"`
	// WindowMS and Limit are the config's; null when it gives none (a limits limiter, whose keys
	// spell their own).
	WindowMS *int64 `json:"window_ms"`
	Limit    *int64 `json:"limit"`
	Keys     int64  `json:"keys"`
	Hits     int64  `json:"hits"` // in the current window, over all keys
	// HitsSaturated is set when that sum lies past the int64 range: Hits is then a bound (at
	// least math.MaxInt64), not the sum.
	HitsSaturated bool  `json:"hits_saturated,omitempty"`
	AtLimit       int64 `json:"at_limit"` // keys at exactly their limit: the next hit is refused
	// OverLimit counts keys past their limit: only a racy writer (a check-then-add, such as ZCARD
	// then ZADD) gets there. Null for a library's layout, whose keys are never over: those that
	// hold more than their limit count refused attempts too (RefusedInWindow).
	OverLimit *int64 `json:"over_limit"`
	// RefusedInWindow sums the refused attempts that a library's keys count in their current
	// window (limits' fixed window, rate-limiter-flexible), over the RefusedKeys keys that count
	// them. Null when no key does (hourglass's own, whose refusals are Rejected; limits' moving
	// window; redis_rate).
	RefusedInWindow *int64 `json:"refused_in_window"`
	// RefusedKeys is how many of Keys RefusedInWindow covers: the others keep no such count.
	RefusedKeys int64 `json:"refused_in_window_keys"`
	// RefusedSaturated is set when RefusedInWindow saturated, as HitsSaturated for Hits.
	RefusedSaturated bool `json:"refused_in_window_saturated,omitempty"`
	// Unknown counts keys of the pattern that the layout cannot read (UnknownNote: the first, and
	// why): never counted as 0 or over.
	Unknown     int64  `json:"unknown"`
	UnknownNote string `json:"unknown_note,omitempty"`
	// WrongType counts keys that fit the pattern but hold another type, or (fixed) a value that
	// is not an integer: left out of every other figure.
	WrongType int64 `json:"wrong_type"`
	// Allowed and Rejected are this hour's decisions, from the counters hourglass's limiter keeps
	// (null for a limiter written by others, which keeps no count of its decisions, and before
	// they are read); the rates compare two snapshots.
	Allowed        *int64     `json:"allowed"`
	Rejected       *int64     `json:"rejected"`
	AllowedPerSec  *float64   `json:"allowed_per_sec"`
	RejectedPerSec *float64   `json:"rejected_per_sec"`
	Top            []KeyCount `json:"top"` // the most used keys
	Hour           int64      `json:"-"`   // the hour window of Allowed and Rejected (Unix), for rates
}

// KeepsDecisions reports whether the limiter's keys are hourglass's own, whose decisions
// (allowed, rejected, and keys over the limit) hourglass counts.
func (l *Limiter) KeepsDecisions() bool { return l.Layout == "" || l.Layout == "hourglass" }

// KeyCount is one key with its count.
type KeyCount struct {
	// AtLimit is set for a library's key that would refuse the next hit: its TTLMS is then the
	// time until the library allows one again.
	AtLimit bool `json:"at_limit,omitempty"`

	Key   string            `json:"key"` // escaped
	Raw   string            `json:"-"`   // the key's own bytes
	Dims  map[string]string `json:"dims"`
	Count int64             `json:"count"`
	TTLMS int64             `json:"ttl_ms"` // for a library's limiter key: until it allows again or its window ends
	// Remaining and Limit are what a library's limiter answers for the key (null for
	// hourglass's own); Refused the refused attempts its value also counts (null for a key that
	// keeps no such count: hourglass's own, limits' moving window, redis_rate).
	Remaining *int64 `json:"remaining"`
	Limit     *int64 `json:"limit"`
	Refused   *int64 `json:"refused"`
}

// Unique is a HyperLogLog or bitmap family.
type Unique struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"` // hll or bitmap
	Windows []UniqueWindow `json:"windows"`
	// Union7d and Union30d are the distinct members over the last 7 and 30 day windows of
	// UnionDims, the dims tuple with the most in the current day (for a pattern without dims, the
	// only one). Null when not read: the family has no day windows or no key today, the read
	// failed (Error), or a bitmap union would have read more than the sweep's budget allows
	// (Union7dSkipped, Union30dSkipped say how much). Never 0 for "not read".
	Union7d         *int64            `json:"union_7d"`
	Union30d        *int64            `json:"union_30d"`
	Union7dSkipped  *UnionSkip        `json:"union_7d_skipped,omitempty"`
	Union30dSkipped *UnionSkip        `json:"union_30d_skipped,omitempty"`
	UnionDims       map[string]string `json:"union_dims"`
	WrongType       int64             `json:"wrong_type"` // keys of the pattern that are not HLLs or strings: not counted
	Error           string            `json:"error,omitempty"`
	// ZoneMismatch is set when the family's hour windows look cut in another zone than the one
	// configured (see FamilyStats.ZoneMismatch).
	ZoneMismatch *ZoneMismatch `json:"zone_mismatch,omitempty"`
}

// UnionSkip says why a bitmap union was not read: the bitmaps it would have read are more than
// a union may read within the sweep's budget.
type UnionSkip struct {
	Bytes       int64  `json:"bytes"`        // the bitmaps' size: what the union would have read
	BudgetBytes int64  `json:"budget_bytes"` // what a union may read
	Reason      string `json:"reason"`       // "skipped: 300.0 MiB over budget (…)"
}

// UniqueWindow is one window of a unique family: its keys and the sum of their distinct counts
// (one key per dims tuple: the sum, say, of each page's UV).
type UniqueWindow struct {
	Granularity string `json:"granularity"`
	Window      string `json:"window"`
	Keys        int64  `json:"keys"`
	Count       int64  `json:"count"`
	// Saturated is set when Count, a sum, lies past the int64 range: it is then a bound.
	Saturated bool `json:"saturated,omitempty"`
	Current   bool `json:"current,omitempty"`
}

// Lock is a lock pattern's keys.
type Lock struct {
	Name      string       `json:"name"`
	Held      int64        `json:"held"`
	NoTTL     int64        `json:"no_ttl"`     // held forever: the holder died between SETNX and PEXPIRE
	WrongType int64        `json:"wrong_type"` // keys of the pattern that are not strings: not counted
	Examples  []LockHolder `json:"examples"`
}

// LockHolder is one held lock.
type LockHolder struct {
	Key   string `json:"key"`    // escaped
	Raw   string `json:"-"`      // the key's own bytes
	Token string `json:"token"`  // escaped
	TTLMS int64  `json:"ttl_ms"` // -1: none
	AgeMS int64  `json:"age_ms"` // -1 when the token does not say (a lock another library took)
}

// JobQueues is one [[job_queue]] entry: a job library's queues under one prefix, counted as the
// library itself counts them.
type JobQueues struct {
	Name   string     `json:"name"`
	Layout string     `json:"layout"` // sidekiq, bullmq, rq, celery or asynq
	Prefix string     `json:"prefix"`
	Queues []JobQueue `json:"queues"` // by name
	// QueuesFound counts the queues found; above len(Queues) when there were more than a
	// snapshot reports.
	QueuesFound int64 `json:"queues_found"`
	// Shared holds what the library keeps for all its queues together (Sidekiq's scheduled,
	// retry and dead sets and busy workers); null when it keeps everything per queue.
	Shared *JobQueue `json:"shared"`
	// Notes say what the library keeps outside Redis, which no reading of Redis counts.
	Notes []string `json:"notes"`
	// Throughput is what the library counts of the jobs it ran: a row a queue where it counts per
	// queue, else one for all; ThroughputNote says how it counts, or why it keeps no count.
	Throughput     []JobThroughput `json:"throughput"`
	ThroughputNote string          `json:"throughput_note,omitempty"`
	Error          string          `json:"error,omitempty"`
	// Workers are the library's live processes as it records them (workers.go); null when the
	// sweep's last step has not read them.
	Workers *JobWorkers `json:"workers"`
}

// JobQueue is one queue of a job library. A count the library does not keep for the queue is
// null, never 0.
type JobQueue struct {
	Queue     string `json:"queue"` // escaped; "" for the library's shared counts
	RawQueue  string `json:"-"`     // the queue's own name
	Waiting   *int64 `json:"waiting"`
	Active    *int64 `json:"active"`
	Scheduled *int64 `json:"scheduled"`
	// Due, OldestDueAgeMS and NextDueInMS read the scheduled set as a delay queue: tasks due now,
	// how long the oldest has waited past its due time, and until the next is due (-1: none).
	// Null when the library has no scheduled set here or its scores are not times (Warning).
	Due            *int64 `json:"due"`
	OldestDueAgeMS *int64 `json:"oldest_due_age_ms"`
	NextDueInMS    *int64 `json:"next_due_in_ms"`
	Retry          *int64 `json:"retry"`
	Dead           *int64 `json:"dead"` // dead, failed or archived
	Completed      *int64 `json:"completed"`
	// LatencyMS is how long the queue's oldest waiting job has waited, as the library defines
	// it; null when it is not known (LatencyNote says why) and on the shared row.
	LatencyMS   *int64 `json:"latency_ms"`
	LatencyNote string `json:"latency_note,omitempty"`
	Paused      bool   `json:"paused,omitempty"`
	// Missing is set for a queue the library no longer knows (BullMQ: no meta hash; asynq: not in
	// asynq:queues) though some of its keys remain.
	Missing bool `json:"missing,omitempty"`
	// States are the library's own states with its own names, as its inspection API reports
	// them.
	States  map[string]int64 `json:"states"`
	Warning string           `json:"warning,omitempty"`
	Error   string           `json:"error,omitempty"`
	// Ref opens the queue (or, for the shared row, the library's shared sets) in the console's
	// drill-down.
	Ref QueueRef `json:"-"`
}

// HasCounts reports whether q holds any of the normalized counts (a library's shared row may hold
// only its own states, such as RQ's workers).
func (q *JobQueue) HasCounts() bool {
	for _, p := range []*int64{q.Waiting, q.Active, q.Scheduled, q.Retry, q.Dead, q.Completed} {
		if p != nil {
			return true
		}
	}
	return false
}

// Totals adds up the entry's queues and its shared row without counting anything twice: a count
// the queues keep is summed over them, and one only the shared row keeps (Sidekiq's scheduled,
// retry, dead and busy) is taken from it. The lag is the largest, the next due the soonest.
func (e *JobQueues) Totals() JobQueue {
	var t JobQueue
	fields := func(q *JobQueue) []**int64 {
		return []**int64{&q.Waiting, &q.Active, &q.Scheduled, &q.Due, &q.Retry, &q.Dead, &q.Completed}
	}
	perQueue := make([]bool, 7)
	for i := range e.Queues {
		for f, p := range fields(&e.Queues[i]) {
			if *p != nil {
				perQueue[f] = true
				*fields(&t)[f] = sumPtr(*fields(&t)[f], **p)
			}
		}
		t.OldestDueAgeMS = maxPtr(t.OldestDueAgeMS, e.Queues[i].OldestDueAgeMS)
		t.NextDueInMS = soonest(t.NextDueInMS, e.Queues[i].NextDueInMS)
		t.LatencyMS = maxPtr(t.LatencyMS, e.Queues[i].LatencyMS)
	}
	if e.Shared != nil {
		for f, p := range fields(e.Shared) {
			if *p != nil && !perQueue[f] {
				*fields(&t)[f] = sumPtr(*fields(&t)[f], **p)
			}
		}
		if !perQueue[3] {
			t.OldestDueAgeMS = maxPtr(t.OldestDueAgeMS, e.Shared.OldestDueAgeMS)
			t.NextDueInMS = soonest(t.NextDueInMS, e.Shared.NextDueInMS)
		}
	}
	return t
}

func sumPtr(p *int64, n int64) *int64 {
	if p == nil {
		return &n
	}
	s := addSat(*p, n)
	return &s
}

func maxPtr(p, q *int64) *int64 {
	if p == nil || (q != nil && *q > *p) {
		return q
	}
	return p
}

// soonest is the nearer of two next-due times, -1 meaning none.
func soonest(p, q *int64) *int64 {
	switch {
	case p == nil || *p < 0:
		if q == nil {
			return p
		}
		return q
	case q == nil || *q < 0:
		return p
	case *q < *p:
		return q
	}
	return p
}

// addSat adds without wrapping: a sum past the int64 range stays at its end. A job library's
// counts are never negative, so one at the end is a bound (at least that many).
func addSat(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}
