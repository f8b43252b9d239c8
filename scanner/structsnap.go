package scanner

// The Snapshot's sections for queues, limiters, uniques and locks. A structure that is not
// configured gives an empty list; one that could not be read says why in Error.

// DelayQueue is a delay queue now.
type DelayQueue struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Depth    int64  `json:"depth"`     // tasks queued, due or not
	Due      int64  `json:"due"`       // due now and not claimed
	InFlight int64  `json:"in_flight"` // claimed, not acknowledged
	// OldestDueAgeMS is how long the oldest due task has waited past its due time: the queue's lag.
	OldestDueAgeMS int64 `json:"oldest_due_age_ms"`
	NextDueInMS    int64 `json:"next_due_in_ms"` // -1 when nothing is scheduled
	// Schedule counts tasks not yet due by when they fall due: 1m, 10m, 1h, later.
	Schedule map[string]int64 `json:"schedule"`
	Error    string           `json:"error,omitempty"`
}

// ListQueue is a list queue now.
type ListQueue struct {
	Name       string `json:"name"`
	Key        string `json:"key"`
	Length     int64  `json:"length"`
	Processing int64  `json:"processing"`
	Error      string `json:"error,omitempty"`
}

// Limiter is a limiter's keys now, ours or another writer's.
type Limiter struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"` // sliding or fixed
	WindowMS int64  `json:"window_ms"`
	Limit    int64  `json:"limit"`
	Keys     int64  `json:"keys"`
	Hits     int64  `json:"hits"`     // in the current window, over all keys
	AtLimit  int64  `json:"at_limit"` // keys at exactly their limit: the next hit is refused
	// OverLimit counts keys past their limit: only a racy writer (a check-then-add, such as ZCARD
	// then ZADD) gets there.
	OverLimit int64 `json:"over_limit"`
	// WrongType counts keys that fit the pattern but hold another type, or (fixed) a value that
	// is not an integer: left out of every other figure.
	WrongType int64 `json:"wrong_type"`
	// Allowed and Rejected are this hour's decisions, from the counters hourglass's limiter keeps
	// (0 for a limiter written by others); the rates compare two snapshots.
	Allowed        int64      `json:"allowed"`
	Rejected       int64      `json:"rejected"`
	AllowedPerSec  *float64   `json:"allowed_per_sec"`
	RejectedPerSec *float64   `json:"rejected_per_sec"`
	Top            []KeyCount `json:"top"` // the most used keys
	hour           int64      // the hour window of Allowed and Rejected (Unix), for rates
}

// KeyCount is one key with its count.
type KeyCount struct {
	Key   string            `json:"key"` // escaped
	Dims  map[string]string `json:"dims"`
	Count int64             `json:"count"`
	TTLMS int64             `json:"ttl_ms"`
}

// Unique is a HyperLogLog or bitmap family.
type Unique struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"` // hll or bitmap
	Windows []UniqueWindow `json:"windows"`
	// Union7d and Union30d are the distinct members over the last 7 and 30 day windows of
	// UnionDims, the dims tuple with the most in the current day (for a pattern without dims, the
	// only one). 0 when the family has no day windows.
	Union7d   int64             `json:"union_7d"`
	Union30d  int64             `json:"union_30d"`
	UnionDims map[string]string `json:"union_dims"`
	WrongType int64             `json:"wrong_type"` // keys of the pattern that are not HLLs or strings: not counted
	Error     string            `json:"error,omitempty"`
}

// UniqueWindow is one window of a unique family: its keys and the sum of their distinct counts
// (one key per dims tuple: the sum, say, of each page's UV).
type UniqueWindow struct {
	Granularity string `json:"granularity"`
	Window      string `json:"window"`
	Keys        int64  `json:"keys"`
	Count       int64  `json:"count"`
	Current     bool   `json:"current,omitempty"`
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
	Token string `json:"token"`  // escaped
	TTLMS int64  `json:"ttl_ms"` // -1: none
	AgeMS int64  `json:"age_ms"` // -1 when the token does not say (a lock another library took)
}
