package bench

// Report is what bench measures; --json prints it as is. A figure that could not be measured is
// null, with a field saying why.
type Report struct {
	Machine      string `json:"machine"`
	RedisVersion string `json:"redis_version"`
	// Full is set by --full: the long run. Seconds is how long the run took.
	Full    bool    `json:"full"`
	Seconds float64 `json:"seconds"`
	Events  int     `json:"events"`
	// Writer is the writer's cases in the order writerPlan lists them: 0–5 on an empty keyspace
	// (fresh), 6 and 7 cases 1 and 3 again on the keys they wrote (steady).
	Writer []rate3 `json:"writer"`
	// SteadyRounds is how many rounds the writer's steady cases and their floors ran in, in turn,
	// each with Events ÷ SteadyRounds events: their server time is the least round's.
	SteadyRounds int `json:"steady_rounds"`
	// Floors is what scripts that only count cost on the keys of the writer's steady cases, in
	// the order floorPlan lists them: the INCRBY-only floor, and the same with each key's expiry
	// kept (the INCRBY and PEXPIREAT NX floor the writer's goal is set against), on one
	// connection and on four.
	Floors []floorRate `json:"floors"`
	// RedisBenchmark is redis-benchmark's EVALSHA of the counter script, one pair a call, -c 1
	// -P 16, on fresh keys, and RedisBenchmark4 the same on four connections (-c 4); the Steady
	// ones on keys that all exist. Nil when redis-benchmark is not installed.
	RedisBenchmark        *float64 `json:"redis_benchmark_pairs_per_sec"`
	RedisBenchmark4       *float64 `json:"redis_benchmark_c4_pairs_per_sec"`
	RedisBenchmarkSteady  *float64 `json:"redis_benchmark_steady_pairs_per_sec"`
	RedisBenchmarkSteady4 *float64 `json:"redis_benchmark_steady_c4_pairs_per_sec"`
	// BareClient is go-redis alone sending redis-benchmark's calls at its shape (one connection,
	// pipelines of 16, sequence 0): what any Go client reaches before the writer does anything;
	// BareClient4 the same on four connections.
	BareClient  float64 `json:"bare_client_pairs_per_sec"`
	BareClient4 float64 `json:"bare_client_c4_pairs_per_sec"`
	Limiter     float64 `json:"limiter_hits_per_sec"`
	Enqueue     float64 `json:"delay_queue_enqueued_per_sec"`
	ClaimAck    float64 `json:"delay_queue_claimed_acked_per_sec"`
	SweepKeys   int     `json:"sweep_keys"`
	// Sweep and RawScan are the medians of the passes' keys/s (SweepSpread has them all).
	Sweep   float64 `json:"sweep_keys_per_sec"`
	RawScan float64 `json:"raw_scan_keys_per_sec"`
	// ConsoleCPU is the console's own load, in percent of one core: Redis' CPU while a console
	// polls less IdleCPU, its CPU with nobody asking, taken just before (its cron, and freeing
	// the memory of bench's earlier keys). ServeCPU is serve's the same way.
	ConsoleCPU float64 `json:"console_redis_cpu_percent"`
	IdleCPU    float64 `json:"idle_redis_cpu_percent"`
	ServeCPU   float64 `json:"serve_redis_cpu_percent"`
	// The wall-clock ratios: key pairs/s at the same pipeline depth (16) and connection count, 1
	// or 4, on fresh keys.
	WriterVsRedisBenchmark      *float64 `json:"writer_vs_redis_benchmark"`         // 32 pairs a call, 1 connection
	SinglePairVsRedisBenchmark  *float64 `json:"single_pair_vs_redis_benchmark"`    // 1 pair a call, 1 connection
	WriterVsRedisBenchmark4     *float64 `json:"writer_vs_redis_benchmark_c4"`      // 32 pairs a call, 4 connections
	SinglePairVsRedisBenchmark4 *float64 `json:"single_pair_vs_redis_benchmark_c4"` // 1 pair a call, 4 connections
	BareClientVsRedisBenchmark  *float64 `json:"bare_client_vs_redis_benchmark"`    // go-redis alone, 1 connection
	BareClientVsRedisBenchmark4 *float64 `json:"bare_client_vs_redis_benchmark_c4"` // go-redis alone, 4 connections
	ZipfEventsPerScript         float64  `json:"zipf_events_per_script"`            // pre-aggregation
	// SweepVsRawScan is Sweep over RawScan (the medians' ratio); SweepSpread has the passes'.
	SweepVsRawScan float64 `json:"sweep_vs_raw_scan"`
	// DiscoverVsSweep is the time a sweep of keys no entry claims takes over the time of the
	// same keys claimed by a config (Discover has both).
	DiscoverVsSweep       float64         `json:"discover_vs_sweep"`
	Discover              *DiscoverReport `json:"discover"`
	RedisBenchmarkSkipped string          `json:"redis_benchmark_skipped,omitempty"`

	ServerFigures
	FloorFigures
	SweepSpread
	ReadFloorFigures
	// Goals says of each goal whether this run met it; null when a figure it needs is unknown.
	Goals Goals `json:"goals"`
	// ServerTime is every case's server time, by case, with its commands and its longest call.
	ServerTime map[string]*ServerTime `json:"server_time"`
	// ServerTimeUnknown says why the server figures are null (a server that refuses INFO).
	ServerTimeUnknown string `json:"server_time_unknown,omitempty"`
}

// rate3 is one writer case: events, key pairs and script calls a second, and what Redis spent.
type rate3 struct {
	Case          string  `json:"case"`
	Keys          string  `json:"keys"` // "fresh": an empty keyspace; "steady": every key there, with its TTL
	EventsPerSec  float64 `json:"events_per_sec"`
	PairsPerSec   float64 `json:"pairs_per_sec"`
	ScriptsPerSec float64 `json:"scripts_per_sec"`
	// ServerUsPerPair and ServerUsPerCall are Redis' own time (INFO commandstats) per key pair
	// written and per script call; LongestCallUs bounds its longest call (LATENCY HISTOGRAM).
	ServerUsPerPair *float64 `json:"server_us_per_pair"`
	ServerUsPerCall *float64 `json:"server_us_per_call"`
	LongestCallUs   *float64 `json:"longest_call_us_at_most"`
}

// ServerFigures are Redis' own time per unit of work, in µs, from INFO commandstats, and their
// ratios to the reference of the same run (_vs_). Null when not measured.
type ServerFigures struct {
	WriterFreshC1  *float64 `json:"writer_fresh_c1_server_us_per_pair"` // 32 pairs a call, pipelines of 16
	WriterFreshC4  *float64 `json:"writer_fresh_c4_server_us_per_pair"`
	WriterSteadyC1 *float64 `json:"writer_steady_c1_server_us_per_pair"`
	WriterSteadyC4 *float64 `json:"writer_steady_c4_server_us_per_pair"`
	SinglePairC1   *float64 `json:"writer_single_pair_c1_server_us_per_pair"` // 1 pair a call, fresh
	SinglePairC4   *float64 `json:"writer_single_pair_c4_server_us_per_pair"`
	BareC1         *float64 `json:"bare_client_server_us_per_pair"`
	BareC4         *float64 `json:"bare_client_c4_server_us_per_pair"`
	RBFreshC1      *float64 `json:"redis_benchmark_fresh_c1_server_us_per_pair"`
	RBFreshC4      *float64 `json:"redis_benchmark_fresh_c4_server_us_per_pair"`
	RBSteadyC1     *float64 `json:"redis_benchmark_steady_c1_server_us_per_pair"`
	RBSteadyC4     *float64 `json:"redis_benchmark_steady_c4_server_us_per_pair"`
	// The writer's over redis-benchmark's single-pair call on keys in the same state (fresh or
	// steady) and as many connections.
	WriterFreshC1VsRB  *float64 `json:"writer_fresh_c1_server_us_per_pair_vs_redis_benchmark"`
	WriterFreshC4VsRB  *float64 `json:"writer_fresh_c4_server_us_per_pair_vs_redis_benchmark"`
	WriterSteadyC1VsRB *float64 `json:"writer_steady_c1_server_us_per_pair_vs_redis_benchmark"`
	WriterSteadyC4VsRB *float64 `json:"writer_steady_c4_server_us_per_pair_vs_redis_benchmark"`
	SinglePairC1VsRB   *float64 `json:"writer_single_pair_c1_server_us_per_pair_vs_redis_benchmark"`
	SinglePairC4VsRB   *float64 `json:"writer_single_pair_c4_server_us_per_pair_vs_redis_benchmark"`
	BareC1VsRB         *float64 `json:"bare_client_server_us_per_pair_vs_redis_benchmark"`
	BareC4VsRB         *float64 `json:"bare_client_c4_server_us_per_pair_vs_redis_benchmark"`

	LimiterUs *float64 `json:"limiter_server_us_per_hit"`
	EnqueueUs *float64 `json:"delay_queue_enqueue_server_us_per_task"`
	ClaimUs   *float64 `json:"delay_queue_claim_server_us_per_task"`
	AckUs     *float64 `json:"delay_queue_ack_server_us_per_task"`
	// Bloom is the Bloom filter's adds and checks beside raw SETBIT/GETBIT scripts.
	Bloom *BloomReport `json:"bloom"`

	// SweepUs and RawScanUs are the medians of the passes' server µs a key.
	SweepUs          *float64 `json:"sweep_server_us_per_key"`
	RawScanUs        *float64 `json:"raw_scan_server_us_per_key"`
	SweepUsVsRawScan *float64 `json:"sweep_server_us_per_key_vs_raw_scan"`
	// SweepLongestUs is the sweep's longest single call, SweepLongestCommand the command, and
	// SweepLongestFrom how it was taken (or why it is not known). SweepLongestExact is false when
	// it is only a bound, from LATENCY HISTOGRAM: the longest call was between half of it and it.
	SweepLongestUs      *float64 `json:"sweep_longest_call_us"`
	SweepLongestExact   bool     `json:"sweep_longest_call_exact"`
	SweepLongestCommand string   `json:"sweep_longest_call_command,omitempty"`
	SweepLongestFrom    string   `json:"sweep_longest_call_from"`
	// RawScanLongestUs is the raw SCAN's longest call at the sweep's median COUNT, taken as the
	// sweep's is, with RawScanLongestExact and RawScanLongestFrom.
	RawScanLongestUs    *float64 `json:"raw_scan_longest_call_us"`
	RawScanLongestExact bool     `json:"raw_scan_longest_call_exact"`
	RawScanLongestFrom  string   `json:"raw_scan_longest_call_from"`
	// SweepCalls and SweepCallsOver count the calls of the sweep SLOWLOG logged and those over
	// the goal's 2 ms; nil unless every call was logged (bench's own server).
	SweepCalls     *int64 `json:"sweep_calls_logged"`
	SweepCallsOver *int64 `json:"sweep_calls_over_2ms"`

	// ConsoleShare and ServeShare are the percent of the server's time (of one core: µs of
	// commands a second of wall clock) a console and serve take at the default settings, polling
	// ConsoleKeys keys.
	ConsoleKeys  int      `json:"console_keys"`
	ConsoleShare *float64 `json:"console_server_time_percent"`
	ServeShare   *float64 `json:"serve_server_time_percent"`
}

// SweepSpread is the sweep's passes beside raw SCAN's, taken in turn: the min, median and max of
// each one's keys/s, of the ratio of each sweep to the raw SCAN after it (at the sweep's mean
// COUNT), and of server µs a key.
type SweepSpread struct {
	Passes        int      `json:"sweep_passes"`
	SweepMin      float64  `json:"sweep_keys_per_sec_min"`
	SweepMedian   float64  `json:"sweep_keys_per_sec_median"`
	SweepMax      float64  `json:"sweep_keys_per_sec_max"`
	RawScanMin    float64  `json:"raw_scan_keys_per_sec_min"`
	RawScanMedian float64  `json:"raw_scan_keys_per_sec_median"`
	RawScanMax    float64  `json:"raw_scan_keys_per_sec_max"`
	RatioMin      float64  `json:"sweep_vs_raw_scan_min"`
	RatioMedian   float64  `json:"sweep_vs_raw_scan_median"`
	RatioMax      float64  `json:"sweep_vs_raw_scan_max"`
	SweepUsMin    *float64 `json:"sweep_server_us_per_key_min"`
	SweepUsMax    *float64 `json:"sweep_server_us_per_key_max"`
	RawScanUsMin  *float64 `json:"raw_scan_server_us_per_key_min"`
	RawScanUsMax  *float64 `json:"raw_scan_server_us_per_key_max"`
	// Each sweep's server µs a key over the raw SCAN's after it.
	UsRatioMin    *float64 `json:"sweep_server_us_per_key_vs_raw_scan_min"`
	UsRatioMedian *float64 `json:"sweep_server_us_per_key_vs_raw_scan_median"`
	UsRatioMax    *float64 `json:"sweep_server_us_per_key_vs_raw_scan_max"`
	// What the sweep asked of SCAN: [scan] max_call, the COUNTs over all passes' calls and the
	// median of the passes' mean COUNT (the raw SCAN after each pass runs at its mean); the
	// longest SCAN and the longest pipeline of a page's reads as the client timed them (round
	// trips: upper bounds of Redis' time); the fewest keys an MGET was given.
	MaxCallUs           float64 `json:"sweep_max_call_us"`
	CountMin            int     `json:"sweep_scan_count_min"`
	CountMedian         float64 `json:"sweep_scan_count_median"`
	CountMax            int     `json:"sweep_scan_count_max"`
	ClientLongestScanUs float64 `json:"sweep_client_longest_scan_us"`
	ClientLongestReadUs float64 `json:"sweep_client_longest_read_us"`
	ChunkMin            int     `json:"sweep_mget_keys_min"`
	// The sweep's Redis main-thread CPU a key (INFO cpu), which waiting for a core does not
	// stretch as it does the commands' time.
	SweepCPUMin    *float64 `json:"sweep_redis_cpu_us_per_key_min"`
	SweepCPUMedian *float64 `json:"sweep_redis_cpu_us_per_key_median"`
	SweepCPUMax    *float64 `json:"sweep_redis_cpu_us_per_key_max"`
}

// Goals says whether this run met each goal; nil when a figure it needs is not known. The goals
// once held against the INCRBY-only floor and raw SCAN are retired: the floors below replaced
// them, and their ratios are still reported.
type Goals struct {
	WriterFreshC1 *bool `json:"writer_fresh_c1"`    // server µs/pair ≤ goalFresh × redis-benchmark's
	WriterFreshC4 *bool `json:"writer_fresh_c4"`    //
	SweepLongest  *bool `json:"sweep_longest_call"` // ≤ goalSweepLongestUs
	// The goals against the floors measured in the same run: the writer's server µs/pair on
	// keys there ≤ goalExpiryFloor × the INCRBY and PEXPIREAT NX floor's, on one connection and
	// on four; the passes' median of the sweep's server µs a key over the read floor's ≤
	// goalReadFloor.
	WriterSteadyC1VsExpiryFloor *bool `json:"writer_steady_c1_vs_expiry_floor"`
	WriterSteadyC4VsExpiryFloor *bool `json:"writer_steady_c4_vs_expiry_floor"`
	SweepVsReadFloor            *bool `json:"sweep_vs_read_floor"`
}

// countMedian is the median of the passes' mean COUNT, or 1000 (the sweep's first COUNT) when no
// pass ran a SCAN.
func (s SweepSpread) countMedian() float64 {
	if s.CountMedian <= 0 {
		return 1000
	}
	return s.CountMedian
}
