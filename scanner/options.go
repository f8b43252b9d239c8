package scanner

import "time"

// Options tune a sweep and the Snapshot made of it. New, NewAggregator, Take, Repair and the
// Watcher (internal/watch's New) all take them, so the sweep reads in the zone and for the structures the aggregate
// reports. The zero value is usable.
type Options struct {
	// Shared by the sweep and the aggregate.

	// Location is the time zone windows are cut in for families without one of their own
	// (time.Local when nil), and of hourglass's limiter decision counters.
	Location *time.Location
	// HostZone is this machine's zone under its IANA name (nil when unknown): the zone discover
	// proposes by name for unclaimed windows cut at its offset (see discover.Options.Host).
	HostZone *time.Location
	// Now reads the server clock (time.Now when nil): windows are current, keys expired and
	// delay queues due by it.
	Now func() time.Time
	// Replica says the sweep's client is a replica: the clock it reads samples and library
	// limiters by is Now (the primary's, as the caller measured it), and it sends no TIME.
	Replica bool
	// Structures are the queues, limiters, uniques and locks to report. The sweep finds and reads
	// the limiters', locks' and uniques' keys, and the queues' that a pattern names; a queue
	// configured by its key is read by that key.
	Structures Structures

	// The sweep: its pace and what it tells apart.

	// Count is the COUNT hint of each master's first SCAN call, and the most any later one asks
	// for (1000 when zero); later calls' COUNT adapts to MaxCall (at least 10).
	Count int
	// MaxCall is the longest one call of the sweep should hold Redis (DefaultMaxCall, 1 ms, when
	// zero or less): SCAN's COUNT and the size of the reads' MGETs adapt, per master, to each
	// call's measured round trip, which bounds Redis' time of the call from above.
	MaxCall time.Duration
	// KeysPerSecond caps how many keys a sweep visits a second, across all masters; of its last
	// step's reads, the unions are charged to it (the rest are bounded by the config: the
	// sampled keys, the queues and limiters configured, at most maxJobQueues a job library).
	// 0 is no cap.
	KeysPerSecond int
	// LiveSample is how many keys of each counter family's current window, besides its top
	// TopK, a Watcher reads again at every Poll to estimate the window's total and rate between
	// sweeps (DefaultLiveSample when zero; negative reads only the top keys). The reads take at
	// most half of KeysPerSecond.
	LiveSample int
	// MaxRedisTime, when above zero, is the share of one core of each master (0.01 is 1%) a
	// Watcher's commands may take: each Poll measures the Redis time a key swept costs (INFO
	// commandstats) and paces the sweep at MaxRedisTime over that cost, KeysPerSecond being the
	// ceiling. Sweeps run outside a Watcher keep KeysPerSecond alone.
	MaxRedisTime float64
	// MaxShapes caps the shapes of unclaimed key names a sweep tells apart (discover's default
	// when zero).
	MaxShapes int
	// Retry, when set, has Run ride out transient faults; nil ends Run on the first error.
	Retry *Retry
	// Infer, when set, adopts entries for the keys no entry claims as the sweep finds them
	// (Take and the Watcher; see Inferrer): the console, snapshot and serve with no config.
	Infer Inferrer
	// StopAt, when above 0 and below 1, ends Take's sweep once it has seen that share of the
	// keys the servers hold (DBSIZE; never while that is unknown), and StopAfter, when above 0,
	// once it has run that long: whichever comes first. The Snapshot is then of a sample, its
	// figures scaled to the whole keyspace as estimates, and Take returns no error.
	StopAt    float64
	StopAfter time.Duration

	// The aggregate: what the Snapshot keeps.

	// TopK is how many of the largest values each window keeps (5 when zero).
	TopK int
	// Examples is how many example keys each problem keeps per family (3 when zero).
	Examples int
	// MemorySamples is how many keys per problem and family MEMORY USAGE reads (8 when zero;
	// negative reads none).
	MemorySamples int
	// ReconcileTuples caps the (dims, day) pairs reconciliation holds per family (65536 when
	// zero). Past it, pairs are sampled by hash and the counts become estimates.
	ReconcileTuples int
	// Target and Mode label the Snapshot.
	Target, Mode string
}

// DefaultLiveSample is how many keys of each counter family's current window, besides its top
// keys, the Watcher reads again at every Poll when Options.LiveSample is zero. 2000 keys gave a
// family of 200,000 Zipf-skewed keys its rate within ±5% and its total within ±2% (95%
// intervals; docs/estimates.md, "Live rates"), and cost 20 MGETs of 100 keys a Poll.
const DefaultLiveSample = 2000

// MaxLiveSample is the most keys a family's live sample may hold: the config refuses more.
const MaxLiveSample = 100_000

// withDefaults fills the options left at zero that the sweep and the aggregate both read.
func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	return o
}
