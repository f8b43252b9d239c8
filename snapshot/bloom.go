package snapshot

// The Snapshot's section for Bloom filters ([[bloom]] entries): each filter's health, read from
// its own metadata and bits (store/bloom.go) or, for RedisBloom's module type, from BF.INFO.

// Bloom is one [[bloom]] entry: the filters its pattern matched.
type Bloom struct {
	Name    string        `json:"name"`
	Filters []BloomFilter `json:"filters"`
	// Unreadable counts the keys of the pattern no filter's reading explains: another type, or
	// a hash without our metadata, or RedisBloom's type where BF.INFO is refused. Each is
	// counted under its reason.
	Unreadable map[string]int64 `json:"unreadable"`
	// More is set when the pattern matched more filters than a sweep reads (the first ones,
	// in SCAN's order, are listed).
	More bool `json:"more,omitempty"`
}

// BloomFilter is one filter's health. A figure that cannot be read is nil, with the reason in
// Notes; one estimated from a sample of its bits carries its interval and coverage.
type BloomFilter struct {
	Key    string `json:"key"`    // escaped
	Raw    string `json:"-"`      // the key's own bytes
	Layout string `json:"layout"` // "hourglass" (its metadata hash) or "redisbloom" (MBbloom--)

	// Capacity is the first sub-filter's elements at its rate, Expansion each new sub-filter's
	// over the last's (0: it does not scale), SubFilters how many it has so far: nil until read.
	Capacity   *int64   `json:"capacity"`
	Expansion  *int     `json:"expansion"`
	SubFilters *int     `json:"sub_filters"`
	TargetRate *float64 `json:"target_error_rate"`
	// Added is the writers' own count of adds that found the element absent (our metadata's
	// added, RedisBloom's "Number of items inserted").
	Added *int64 `json:"added"`
	// Elements is the distinct elements it holds, estimated from the bits set (docs/bloom.md).
	Elements *BloomFigure `json:"elements"`
	// Fill is the share of its bits set, over all its sub-filters.
	Fill *BloomFigure `json:"fill_ratio"`
	// FalsePositive is the chance now that an element never added reads as held.
	FalsePositive *BloomFigure `json:"false_positive_rate"`
	// OverTarget is set when FalsePositive is past TargetRate (its low end, for an estimate).
	OverTarget  bool   `json:"over_target"`
	MemoryBytes *int64 `json:"memory_bytes"` // MEMORY USAGE of its keys
	TTLMS       int64  `json:"ttl_ms"`       // -1: none
	// Notes say why a figure is missing or how it was read.
	Notes []string `json:"notes,omitempty"`
}

// BloomFigure is a figure read from a filter: exact when every bit was counted (Coverage 1,
// Low = High = Value), else estimated from counted byte ranges, with its 95% interval and the
// share of the bits it rests on.
type BloomFigure struct {
	Value    float64 `json:"value"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Coverage float64 `json:"coverage"`
	// From says what the figure was computed from when it is not the bits ("items", for a
	// RedisBloom filter's counts).
	From string `json:"from,omitempty"`
}

// Exact reports whether the figure rests on every bit.
func (f BloomFigure) Exact() bool { return f.Coverage >= 1 && f.Low == f.High && f.From == "" }
