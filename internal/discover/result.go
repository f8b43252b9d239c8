package discover

// Kind is what discover takes a group of keys to be.
type Kind string

// The kinds a group can be.
const (
	KindCounter        Kind = "counter"         // integer strings in hour or day windows
	KindUnique         Kind = "unique"          // HyperLogLogs in windows
	KindBitmap         Kind = "bitmap"          // bitmaps in windows
	KindDelayQueue     Kind = "delay_queue"     // a sorted set of tasks scored by due time
	KindListQueue      Kind = "list_queue"      // a list of tasks
	KindSlidingLimiter Kind = "sliding_limiter" // sorted sets of recent hit times
	KindFixedLimiter   Kind = "fixed_limiter"   // small integer strings with short TTLs
	KindLock           Kind = "lock"            // short-TTL strings holding a random token
	KindJobQueue       Kind = "job_queue"       // a job library's keys
	KindLimiterLibrary Kind = "limiter_library" // a limiter library's keys
	KindBloom          Kind = "bloom"           // Bloom filters: hourglass's metadata hashes and sub-filters, RedisBloom's type
	KindOther          Kind = "other"           // keys hourglass reads no structure from: caches, sessions, records
	KindUndecided      Kind = "undecided"       // the evidence does not tell
)

// Confidence says how far the evidence supports a group's kind and entry. Low-confidence entries
// are proposed commented out.
type Confidence string

// Confidence levels.
const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// Result is what Groups found so far.
type Result struct {
	Keys int64 `json:"keys"` // unclaimed keys counted
	// Bytes estimates their memory: per group, the mean MEMORY USAGE of its sampled keys times its
	// keys; 0 when no key is unclaimed. Nil when no sample's memory could be read; BytesNote then says
	// why.
	Bytes     *int64  `json:"bytes"`
	BytesNote string  `json:"bytes_note,omitempty"`
	Sampled   int64   `json:"sampled"` // keys whose type, TTL and value were read
	Groups    []Group `json:"groups"`  // largest first
	// While the sweep has not seen every key (discover --sample, a sweep under way): Coverage is
	// the share of the keys the servers hold (DBSize, from DBSIZE) that it has seen, and
	// KeysEstimate and BytesEstimate scale Keys and Bytes to the whole keyspace (see Estimate).
	// Absent after a complete sweep.
	Coverage      float64   `json:"coverage,omitempty"`
	DBSize        int64     `json:"db_size,omitempty"`
	KeysEstimate  *Estimate `json:"keys_estimate,omitempty"`
	BytesEstimate *Estimate `json:"bytes_estimate,omitempty"`
}

// Group is keys that share a pattern, with what discover takes them to be.
type Group struct {
	// Pattern is the keys' pattern in hourglass's syntax (placeholders in angle brackets), or
	// the one key's name.
	Pattern string `json:"pattern"`
	Kind    Kind   `json:"kind"`
	Keys    int64  `json:"keys"`
	// Bytes is the estimated memory of the group's keys; nil when no sample's was read.
	Bytes *int64 `json:"bytes"`
	// Sampled is how many of its keys were read for the evidence.
	Sampled    int        `json:"sampled"`
	Examples   []string   `json:"examples"` // raw key names: escape them before display
	Confidence Confidence `json:"confidence"`
	// Evidence says what the kind and the entry rest on, one finding a line.
	Evidence []string `json:"evidence"`
	// Entry is the config entry proposed for the group; nil for kinds hourglass has no entry for
	// (other, undecided) and for windows no family can read.
	Entry *Entry `json:"entry"`
	// KeysEstimate and BytesEstimate scale Keys and Bytes (what was seen) to the whole keyspace
	// while the sweep has not seen every key; nil after a complete sweep. The memory's estimate
	// is the sampled keys' mean memory times the estimated keys, its interval the keys' interval
	// times that mean.
	KeysEstimate  *Estimate `json:"keys_estimate,omitempty"`
	BytesEstimate *Estimate `json:"bytes_estimate,omitempty"`

	members      []*shape // the live shapes its keys are in, for the estimates
	mayBeLibrary bool     // see MayBeLibrary
	awaitsMark   bool     // see AwaitsMark
	zone         zoneFit  // what its newest window says of its zone (Entry.Timezone), when ok
}

// Entry is one proposed config.toml table.
type Entry struct {
	Table         string `json:"table"` // counter, unique, bitmap, delay_queue, list_queue, limiter, lock, job_queue, bloom
	Name          string `json:"name"`
	Pattern       string `json:"pattern,omitempty"`
	Key           string `json:"key,omitempty"`
	HourFormat    string `json:"hour_format,omitempty"`
	HourRetention string `json:"hour_retention,omitempty"`
	DayFormat     string `json:"day_format,omitempty"`
	DayRetention  string `json:"day_retention,omitempty"`
	ScoreUnit     string `json:"score_unit,omitempty"`
	Layout        string `json:"layout,omitempty"`
	Prefix        string `json:"prefix,omitempty"`
	LimiterKind   string `json:"kind,omitempty"`
	Window        string `json:"window,omitempty"`
	Limit         int64  `json:"limit,omitempty"`
	// Processing and InFlight are "" (none) for another program's queues, which have no
	// companion of hourglass's own.
	Processing *string `json:"processing,omitempty"`
	InFlight   *string `json:"inflight,omitempty"`
	// Timezone is the zone the windows' data shows they are cut in ("UTC", this machine's zone
	// by name, or an offset such as "+08:00"); "" when it shows none (no windows, or none
	// being written).
	Timezone string `json:"timezone,omitempty"`
	// Exclude are the keys (SCAN MATCH globs) the pattern fits that are another entry's: the keys
	// of a group split from this one by score unit.
	Exclude []string `json:"exclude,omitempty"`
	// Guessed names the settings the keys do not hold ("window", "limit"), which discover could
	// only guess from what they show: an entry with any is for the operator to complete, and is
	// not adopted when the entries are inferred.
	Guessed []string `json:"guessed,omitempty"`
}

// Guessing returns the groups whose entry has a setting the keys do not hold (Entry.Guessed): a
// limiter's limit, for the operator to set before it is watched.
func (r Result) Guessing() []Group {
	var out []Group
	for _, g := range r.Groups {
		if g.Entry != nil && len(g.Entry.Guessed) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// Claiming returns r without the groups of one key that an entry turned out to claim: names holds
// those keys as the groups' examples spell them. Their keys, memory and samples leave the totals
// too. Only a complete sweep's result (no estimates) is changed.
func (r Result) Claiming(names map[string]bool) Result {
	if len(names) == 0 || r.KeysEstimate != nil {
		return r
	}
	out := r
	out.Groups = make([]Group, 0, len(r.Groups))
	for _, g := range r.Groups {
		if g.Keys != 1 || len(g.Examples) != 1 || !names[g.Examples[0]] {
			out.Groups = append(out.Groups, g)
			continue
		}
		out.Keys--
		out.Sampled -= int64(g.Sampled)
		if out.Bytes != nil && g.Bytes != nil {
			b := *out.Bytes - *g.Bytes
			out.Bytes = &b
		}
	}
	return out
}
