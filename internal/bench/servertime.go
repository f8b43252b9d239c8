package bench

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// ServerTime is what Redis itself spent on one case's commands: the usec of INFO commandstats
// between the case's start and end, for the commands the case sent.
//
// Redis 7.0 lists the commands a script runs under their own names as well (a counter script's
// INCRBY, PTTL and PEXPIREAT beside its EVALSHA), and counts their time inside the script's too,
// so adding every line of commandstats would count a script's work twice. A case's time is
// therefore the time of the commands its client sent (counted by a hook on the client, or, for
// redis-benchmark, the calls it was told to make): a script counts once, with all it does. Where
// Redis counted more calls of a name than the case sent (scripts that run the same command, or
// another client's traffic on a given server), only the case's share of that name's time is
// counted: its calls times the name's mean time a call.
type ServerTime struct {
	Usec  float64 `json:"usec"`  // Redis' time on the case's commands, in microseconds
	Calls int64   `json:"calls"` // the calls counted
	// Units is how many of what the case measures per (pairs, hits, tasks, keys) the time is
	// over, and UsPer the time per unit; Unit names it.
	Units float64 `json:"units"`
	Unit  string  `json:"unit"`
	UsPer float64 `json:"us_per_unit"`
	// CPUUsPer is the CPU Redis' main thread used a unit meanwhile (INFO cpu): beside its
	// commands, reading requests and writing replies, and its own cron. It does not grow when the
	// server waits for a core, which the commands' time does; on a given server it holds the
	// other clients' work too.
	CPUUsPer *float64 `json:"cpu_us_per_unit"`
	// ByCommand is the time by the name INFO commandstats files each command under.
	ByCommand map[string]float64 `json:"by_command_usec"`
	// LongestAtMost bounds the longest single call of the case from above, from the server's
	// LATENCY HISTOGRAM (Redis 7 and later): the longest was between half of it and it. Nil
	// with LongestUnknown saying why when the server keeps no histogram.
	LongestAtMost  *float64 `json:"longest_call_us_at_most"`
	LongestUnknown string   `json:"longest_call_unknown,omitempty"`
}

// sentCommands counts the commands a client sends, by their name in INFO commandstats. It is a
// go-redis hook: every command of the bench's client, pipelined or not, passes through it.
type sentCommands struct {
	mu sync.Mutex
	n  map[string]int64
}

func newSentCommands() *sentCommands { return &sentCommands{n: map[string]int64{}} }

func (s *sentCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *sentCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.count([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (s *sentCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.count(cmds)
		return next(ctx, cmds)
	}
}

func (s *sentCommands) count(cmds []redis.Cmder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cmds {
		if name := store.CommandStatName(c.Args()); !handshake[name] {
			s.n[name]++
		}
	}
}

// handshake are the commands go-redis sends on a new connection: the pool's work, not the case's.
var handshake = map[string]bool{"hello": true, "auth": true, "select": true, "client|setinfo": true, "client|setname": true,
	"client|maint_notifications": true}

// snapshot is a copy of the counts so far.
func (s *sentCommands) snapshot() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.n)
}

// cmdStat is one line of INFO commandstats.
type cmdStat = store.CommandStat

// readCommandStats reads INFO commandstats, by command name.
func readCommandStats(ctx context.Context, rdb *redis.Client) (map[string]cmdStat, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return store.ParseCommandStats(info), nil
}

// meter takes INFO commandstats (and LATENCY HISTOGRAM) around a case, on a client of its own
// so that its reads are not counted as the case's, and attributes the difference to the
// commands the case sent.
type meter struct {
	stats *redis.Client // the bench's second client, with no hook
	sent  *sentCommands // the hook on the client the cases use
	why   string        // set when the server refuses INFO commandstats: every figure is unknown
}

// mark is the state of the server's counters and the client's when a case began.
type mark struct {
	cpu   float64 // CPU seconds of Redis' main thread; -1 when INFO cpu failed
	stats map[string]cmdStat
	hist  map[string]latencyHist
	sent  map[string]int64
	err   error
}

// start marks the beginning of a case.
func (m *meter) start(ctx context.Context) mark {
	mk := mark{sent: m.sent.snapshot()}
	if m.why != "" {
		return mk
	}
	mk.stats, mk.err = readCommandStats(ctx, m.stats)
	mk.hist, _ = readLatencyHist(ctx, m.stats) // a server without histograms still has commandstats
	mk.cpu = mainThreadCPU(ctx, m.stats)
	return mk
}

// since is the server time of the commands the client sent since mk, over units of unit; sent,
// when given, stands for the client's counts (redis-benchmark's calls). Nil when the server's
// counters could not be read; the meter then says why.
func (m *meter) since(ctx context.Context, mk mark, units float64, unit string, sent map[string]int64) *ServerTime {
	if m.why != "" {
		return nil
	}
	if mk.err != nil {
		m.why = "INFO commandstats: " + mk.err.Error()
		return nil
	}
	stats, err := readCommandStats(ctx, m.stats)
	if err != nil {
		m.why = "INFO commandstats: " + err.Error()
		return nil
	}
	hist, histErr := readLatencyHist(ctx, m.stats)
	cpu := mainThreadCPU(ctx, m.stats)
	if sent == nil {
		sent = m.sent.snapshot()
		for name, n := range mk.sent {
			sent[name] -= n
		}
	}
	st := &ServerTime{Units: units, Unit: unit, ByCommand: map[string]float64{}}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(sent)) {
		n := sent[name]
		calls, usec := stats[name].Calls-mk.stats[name].Calls, stats[name].Usec-mk.stats[name].Usec
		if n <= 0 || calls <= 0 {
			continue
		}
		share := min(1, float64(n)/float64(calls)) // only the case's calls of this name
		st.ByCommand[name] = float64(usec) * share
		st.Usec += float64(usec) * share
		st.Calls += min(n, calls)
		names = append(names, name)
	}
	if units > 0 {
		st.UsPer = st.Usec / units
		if cpu >= 0 && mk.cpu >= 0 {
			v := (cpu - mk.cpu) * 1e6 / units
			st.CPUUsPer = &v
		}
	}
	if histErr != nil || mk.hist == nil {
		st.LongestUnknown = "the server keeps no LATENCY HISTOGRAM (Redis 7 with latency-tracking on)"
		if histErr != nil {
			st.LongestUnknown += ": " + histErr.Error()
		}
	} else {
		st.LongestAtMost = longestAtMost(mk.hist, hist, names)
	}
	return st
}

// mainThreadCPU is the CPU seconds Redis' main thread has used (INFO cpu; the whole process's
// before Redis 6.2 named the main thread's), or -1 when INFO cpu fails.
func mainThreadCPU(ctx context.Context, rdb *redis.Client) float64 {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return -1
	}
	fields := map[string]float64{}
	for line := range strings.SplitSeq(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k], _ = strconv.ParseFloat(v, 64)
		}
	}
	if _, ok := fields["used_cpu_user_main_thread"]; ok {
		return fields["used_cpu_user_main_thread"] + fields["used_cpu_sys_main_thread"]
	}
	return fields["used_cpu_user"] + fields["used_cpu_sys"]
}
