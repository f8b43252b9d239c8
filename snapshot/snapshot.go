package snapshot

import (
	"slices"
	"time"

	"github.com/hourglass-dev/hourglass/internal/estimate"

	"github.com/hourglass-dev/hourglass/internal/discover"
)

// Snapshot is what one complete sweep found: every counter family's windows, rates, series, TTL
// health and reconciliation. It is the data every front end renders (the console, the JSON of
// `hourglass snapshot`, metrics), so its field names are stable. Every string in it that was
// read from Redis (key names, dims, values) is escaped with format.Escape and safe to print.
type Snapshot struct {
	TakenAt time.Time `json:"taken_at"` // the server time the sweep ended
	// StructuresAt is when the queues, the limiters' decisions and busiest keys and the locks
	// shown were read again, past the sweep (a Watcher reads them every Poll); zero when they
	// are as the sweep read them. The counts of keys a sweep counted stay as of TakenAt.
	StructuresAt time.Time     `json:"structures_at,omitzero"`
	Target       string        `json:"target"` // the address(es), passwords redacted
	Mode         string        `json:"mode"`   // embedded, standalone or cluster
	Scan         ScanStats     `json:"scan"`
	Counters     []FamilyStats `json:"counters"`
	TTLHealth    Health        `json:"ttl_health"` // the families' health added up, and locks without TTL

	DelayQueues []DelayQueue `json:"delay_queues"`
	ListQueues  []ListQueue  `json:"list_queues"`
	Limiters    []Limiter    `json:"limiters"`
	Uniques     []Unique     `json:"uniques"`
	Locks       []Lock       `json:"locks"`
	JobQueues   []JobQueues  `json:"job_queues"`
	Blooms      []Bloom      `json:"blooms"`
	// Warnings are what the sweep found wrong with the config against this keyspace, such as
	// keys that two entries both claim (each counted once, under the first).
	Warnings []string `json:"warnings"`
	// Unclaimed is the keys no entry claims: how many, their estimated memory, and their groups
	// with the kind, evidence and config entry discover proposes for each. Examples are escaped.
	Unclaimed discover.Result `json:"unclaimed"`
	// Inferred, when no config was given, lists the entries the sweep inferred from the keys
	// and counted as if configured (nil when the entries come from a config).
	Inferred *Inferred `json:"inferred,omitempty"`
	// Server is the server's health from INFO, read before and after the sweep (so its rates
	// span the sweep), by the snapshot command; nil in a Watcher's Snapshot, whose Status
	// carries it.
	Server *ServerInfo `json:"server,omitempty"`
}

// ScanStats says how much of the keyspace a sweep visited.
type ScanStats struct {
	KeysSeen    int64 `json:"keys_seen"`    // keys SCAN returned, in families or not
	KeysMatched int64 `json:"keys_matched"` // keys that belong to a family
	KeysGone    int64 `json:"keys_gone"`    // family keys that expired between SCAN and their read
	DurationMS  int64 `json:"duration_ms"`
	Complete    bool  `json:"complete"` // every master's cursor came back to 0
	// Masters splits KeysSeen by cluster master (empty on a standalone server).
	Masters []MasterKeys `json:"masters"`
	// Coverage is the share of the keyspace swept: KeysSeen over the keys the servers hold
	// (DBSIZE, read as the sweep goes); 1 when Complete, 0 when DBSIZE could not be read.
	Coverage float64 `json:"coverage"`
	// ETASeconds is how long the rest of the sweep should take at the pace it has kept so far
	// (nil when complete or not yet known).
	ETASeconds *float64 `json:"eta_seconds"`
	// DBSizeNote says why the keys the servers hold are unknown (DBSIZE refused), so nothing
	// is scaled; empty when they are known.
	DBSizeNote string `json:"db_size_note,omitempty"`
}

// MasterKeys is one cluster master's share of a sweep.
type MasterKeys struct {
	Addr     string `json:"addr"`
	KeysSeen int64  `json:"keys_seen"`
	// DBSize is the keys the master held when last read (DBSIZE); 0 when unknown.
	DBSize   int64   `json:"db_size"`
	Coverage float64 `json:"coverage"` // KeysSeen over DBSize, 1 once the master is swept to its end
	Done     bool    `json:"done"`     // swept to its end
}

// Estimate is a figure of a sweep not yet complete, scaled to the whole keyspace from the keys
// swept so far. Those are a sample, since SCAN's order has nothing to do with key names. It carries
// its 95% interval and the share of the keys it rests on. The figure beside it holds the estimate
// rounded. SoFar is set when the sweep saw too little of it to scale: it sits in fewer than five of
// the pages read, or the keys the servers hold are unknown. Then the figure is what was seen so
// far, Low is that too, and High is unknown (nil). See docs/estimates.md.
type Estimate = estimate.Shown

// FamilyStats is one counter family in a Snapshot.
type FamilyStats struct {
	Family string   `json:"family"`
	Dims   []string `json:"dims"` // the dims' names, in pattern order
	// Granularities are the window lengths the family is written in: hour, day or both.
	Granularities []string `json:"granularities"`
	Keys          int64    `json:"keys"` // keys of the family present in Redis
	// KeysEstimate is set while Keys is an estimate (a sweep under way): see Estimate.
	KeysEstimate *Estimate `json:"keys_estimate,omitempty"`
	// Windows holds every window a key was found in, hours then days, oldest first.
	Windows []WindowStats `json:"windows"`
	// RatePerSec is how fast the family's current window grows, in events a second. The window is
	// the hour's, or the day's for a family without hour windows. RateFrom says how it was
	// measured. "reads" is the least-squares slope of the window's total read over the last minute,
	// from a Watcher's live reads and quick sweeps (docs/estimates.md, "Rates"). "sweeps" is the
	// growth between the last two sweeps, at least scanner.MinRateSpan apart. It includes
	// increments that landed in the previous window after it ended. RateSpanSec is the seconds it
	// was measured over. RatePerSec is nil when it is not known, with the reason in RateNote: one sweep (a
	// one-shot snapshot), reads spanning too little yet, a saturated total.
	RatePerSec  *float64 `json:"rate_per_sec"`
	RateFrom    string   `json:"rate_from,omitempty"`
	RateSpanSec float64  `json:"rate_span_sec,omitempty"`
	RateNote    string   `json:"rate_note,omitempty"`
	// HourAvgPerSec is the current hour's total divided by the seconds gone in the hour; nil,
	// with the reason in HourAvgNote, for a family without hour windows (or in the hour's first
	// second).
	HourAvgPerSec *float64 `json:"hour_avg_per_sec"`
	HourAvgNote   string   `json:"hour_avg_note,omitempty"`
	Series        Series   `json:"series"`
	// TTL sorts the family's keys by expiry; its four counts add up to Keys.
	TTL TTLCounts `json:"ttl"`
	// TTLEstimate is set while the TTL counts are estimates, one per count.
	TTLEstimate    *TTLEstimates   `json:"ttl_estimate,omitempty"`
	WrongType      int64           `json:"wrong_type"`  // keys that are not strings
	NotInteger     int64           `json:"not_integer"` // strings that are not a 64-bit integer
	MismatchedDims int64           `json:"mismatched_dims"`
	Reconciliation *Reconciliation `json:"reconciliation"` // nil unless the family has hour and day windows
	Health         Health          `json:"health"`
	// ZoneMismatch is set, after a complete sweep, when the family's hour windows look cut in
	// another zone than the one configured. That is, the current hour has no key, and the newest is
	// the current hour at another offset. Its message is in the Snapshot's Warnings too.
	ZoneMismatch *ZoneMismatch `json:"zone_mismatch,omitempty"`
}

// WindowStats is one window of a family.
type WindowStats struct {
	Granularity string    `json:"granularity"` // hour or day
	Window      string    `json:"window"`      // as the family formats it, e.g. 2026112214
	Start       time.Time `json:"start"`
	Total       int64     `json:"total"` // the sum of the window's integer values
	// Saturated is set when that sum lies past the int64 range: Total is then the end it passed,
	// a bound (at least math.MaxInt64, or at most math.MinInt64), not the sum.
	Saturated bool `json:"saturated,omitempty"`
	// TotalEstimate is set while Total is an estimate.
	TotalEstimate *Estimate `json:"total_estimate,omitempty"`
	Keys          int64     `json:"keys"` // keys present, integer or not
	// KeysEstimate is set while Keys is an estimate.
	KeysEstimate *Estimate `json:"keys_estimate,omitempty"`
	Current      bool      `json:"current,omitempty"`
	// Expired is set when the window's retention has passed: its keys should be gone.
	Expired bool `json:"expired,omitempty"`
	// Top is the largest values, largest first (not for expired windows). While the sweep is
	// under way it is the largest so far: a maximum is never scaled.
	Top []DimsValue `json:"top,omitempty"`
}

// DimsValue is one key's dims and value.
type DimsValue struct {
	Dims  map[string]string `json:"dims"`
	Value int64             `json:"value"`
	Raw   string            `json:"-"` // the raw key name, for a Watcher's live reads
}

// Series holds window totals for sparklines, oldest first, ending at the current window; a
// window with no keys is 0.
type Series struct {
	Hours []int64 `json:"hours"` // the last 48 hours (empty when the family has no hour windows)
	Days  []int64 `json:"days"`  // the last 30 days (empty when the family has no day windows)
	// Saturated is set when one of these totals is a saturated window's (see WindowStats).
	Saturated bool `json:"saturated,omitempty"`
	// Estimated is set while the totals are estimates (see each window's TotalEstimate).
	Estimated bool `json:"estimated,omitempty"`
}

// Series lengths.
const (
	SeriesHours = 48
	SeriesDays  = 30
)

// TTLCounts sorts keys by their expiry. A key with no TTL counts as NoTTL whatever its window.
type TTLCounts struct {
	OK                int64 `json:"ok"`                  // expires by its window's end plus retention
	NoTTL             int64 `json:"no_ttl"`              // never expires: a leak
	OverRetention     int64 `json:"over_retention"`      // expires later than window end plus retention
	ExpiredButPresent int64 `json:"expired_but_present"` // has a TTL, but its window's retention has passed
}

// TTLEstimates are the estimates of a TTLCounts while a sweep is under way.
type TTLEstimates struct {
	OK                Estimate `json:"ok"`
	NoTTL             Estimate `json:"no_ttl"`
	OverRetention     Estimate `json:"over_retention"`
	ExpiredButPresent Estimate `json:"expired_but_present"`
}

// Reconciliation checks that a family's hour windows add up to its day window, for each dims
// tuple and each day that has ended and whose hours are all still retained. The current day is
// left out: a sweep is not a point-in-time read, and with traffic flowing the hour and day keys
// are read at different moments.
type Reconciliation struct {
	Days       int   `json:"days"`       // days checked
	Dims       int64 `json:"dims"`       // (dims tuple, day) pairs checked
	Mismatched int64 `json:"mismatched"` // pairs whose hours do not add up to the day
	Difference int64 `json:"difference"` // the sum of |hours − day| over those pairs
	// Saturated is set when Difference lies past the int64 range: it is then at least that.
	Saturated bool       `json:"saturated,omitempty"`
	Sampled   float64    `json:"sampled"` // the share of pairs checked; below 1 the counts are estimates
	Examples  []Mismatch `json:"examples"`
}

// Mismatch is one dims tuple whose hours and day disagree.
type Mismatch struct {
	Day      string            `json:"day"`
	Dims     map[string]string `json:"dims"`
	Hours    int64             `json:"hours"` // the sum of the day's hour windows
	DayValue int64             `json:"day_value"`
	// Saturated is set when Hours or DayValue lies past the int64 range: it is then the end it
	// passed, a bound.
	Saturated bool `json:"saturated,omitempty"`
}

// Health gathers the keys that are wrong in some way, with examples and the memory they hold.
type Health struct {
	NoTTL             Problem `json:"no_ttl"`
	OverRetention     Problem `json:"over_retention"`
	ExpiredButPresent Problem `json:"expired_but_present"`
	WrongType         Problem `json:"wrong_type"`
	NotInteger        Problem `json:"not_integer"`
	// LockNoTTL counts locks held with no expiry (in the total only): a process that died between
	// SETNX and PEXPIRE leaves one, and nothing will ever free it.
	LockNoTTL Problem `json:"lock_no_ttl"`
	// MemoryNote says why Bytes are missing (MEMORY USAGE refused or failed); empty when they are
	// estimated.
	MemoryNote string `json:"memory_note,omitempty"`
}

// Problem is one kind of unhealthy key.
type Problem struct {
	Keys int64 `json:"keys"`
	// KeysEstimate is set while Keys is an estimate (Bytes then scales with it).
	KeysEstimate *Estimate `json:"keys_estimate,omitempty"`
	// Bytes estimates the memory the keys hold: MEMORY USAGE of a sample, scaled to Keys.
	Bytes    int64     `json:"bytes"`
	Sampled  int       `json:"bytes_sampled"` // keys MEMORY USAGE read
	Examples []Example `json:"examples"`
}

// Example is one unhealthy key.
type Example struct {
	Family string `json:"family"`
	Key    string `json:"key"`
	// TTLMS is the key's remaining TTL in milliseconds, -1 for none.
	TTLMS int64 `json:"ttl_ms"`
	// ExpireAt is when the key should expire: its window's end plus retention.
	ExpireAt time.Time `json:"expire_at"`
	Value    string    `json:"value,omitempty"` // for a non-integer value
	Type     string    `json:"type,omitempty"`  // for a key of the wrong type
	Bytes    int64     `json:"bytes,omitempty"` // MEMORY USAGE, when read
}

// Problems returns the health's problems with their snake_case names, in report order.
func (h *Health) Problems() []NamedProblem {
	return []NamedProblem{
		{"no_ttl", &h.NoTTL}, {"over_retention", &h.OverRetention},
		{"expired_but_present", &h.ExpiredButPresent}, {"wrong_type", &h.WrongType},
		{"not_integer", &h.NotInteger}, {"lock_no_ttl", &h.LockNoTTL},
	}
}

// NamedProblem is a Problem with its name.
type NamedProblem struct {
	Name string
	*Problem
}

// Family returns the stats of the family named name, or nil.
func (s *Snapshot) Family(name string) *FamilyStats {
	for i := range s.Counters {
		if s.Counters[i].Family == name {
			return &s.Counters[i]
		}
	}
	return nil
}

// Has reports whether the family keeps windows of granularity g ("hour" or "day").
func (f *FamilyStats) Has(g string) bool { return slices.Contains(f.Granularities, g) }

// Window returns the family's window of granularity g ("hour" or "day") starting at start, or nil.
func (f *FamilyStats) Window(g string, start time.Time) *WindowStats {
	for i := range f.Windows {
		if w := &f.Windows[i]; w.Granularity == g && w.Start.Equal(start) {
			return w
		}
	}
	return nil
}

// CurrentWindow returns the family's current window of granularity g, or nil when it has no key.
func (f *FamilyStats) CurrentWindow(g string) *WindowStats {
	for i := range f.Windows {
		if w := &f.Windows[i]; w.Granularity == g && w.Current {
			return w
		}
	}
	return nil
}

// Inferred is what a Snapshot or a Status says of entries inferred from the keys: those adopted,
// in the order they were, and how many of them count only from the next sweep.
type Inferred struct {
	Entries []discover.Entry `json:"entries"`
	// Pending is how many of Entries the figures shown do not count yet (adopted when the sweep
	// was too far on to start over, or at its end): the next sweep does.
	Pending int `json:"pending"`
}

// How a family's RatePerSec was measured (FamilyStats.RateFrom).
const (
	RateFromReads  = "reads"  // the slope of the window's total read over the last minute
	RateFromSweeps = "sweeps" // the growth between the last two sweeps
)

// MillisUp is d in whole milliseconds, rounded up: a sweep that ran never reads as 0 ms.
func MillisUp(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
