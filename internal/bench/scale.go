package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// The goals the scale run holds its figures to.
const (
	goalFirstFigures = 2.0  // seconds from a console's start to its first figures, at most
	goalTotalsAt5    = 0.02 // the main families' figures' relative error at 5% coverage, at most
	goalHitRate      = 0.9  // the trials' share whose 95% interval holds the exact value, at least
	goalConsoleCPU   = 1.0  // the console's Redis CPU at the defaults, percent of a core, below
)

// scaleCoverages are the shares of the keyspace the estimates are measured at.
var scaleCoverages = []float64{0.01, 0.05, 0.20}

// ScaleOptions say how large the scale run is.
type ScaleOptions struct {
	Keys        int64         // keys on one server (10,000,000 by default)
	ClusterKeys int64         // keys on a 3-master cluster; 0 skips the cluster
	ConsoleFor  time.Duration // how long the console polls each keyspace (30 s by default)
	// LiveFor is how long the live rate is measured on each keyspace after a warm-up of a quarter
	// of it (40 s by default), and LiveRate the events a second injected (5,000 by default).
	LiveFor  time.Duration
	LiveRate float64
	// Defaults is the built-in config, whose [scan] count and keys_per_second and [ui] refresh
	// the console runs at and whose count the estimates' sweep takes.
	Defaults *config.Config
	Log      io.Writer
}

// ScaleReport is what the scale run measures; --json prints it as is.
type ScaleReport struct {
	Machine      string  `json:"machine"`
	RedisVersion string  `json:"redis_version"`
	Seconds      float64 `json:"seconds"`
	// Trials is the trial families of each keyspace, and TrialsFrom how they make independent
	// trials.
	Trials     int           `json:"trials"`
	TrialsFrom string        `json:"trials_from"`
	Servers    []ScaleServer `json:"servers"`
	Goals      ScaleGoals    `json:"goals"`
}

// ScaleServer is one keyspace: one server, or a cluster's masters.
type ScaleServer struct {
	Kind    string `json:"kind"` // "server" or "cluster"
	Masters int    `json:"masters"`
	Keys    int64  `json:"keys"` // DBSIZE summed over the masters after the load
	// LoadSeconds is how long writing them took (pipelined SET ... EXAT over raw RESP).
	LoadSeconds    float64      `json:"load_seconds"`
	LoadKeysPerSec float64      `json:"load_keys_per_sec"`
	UsedMemory     int64        `json:"used_memory_bytes"`
	Console        ScaleConsole `json:"console"`
	// LiveRate is the console's live rate against a known injected rate; nil with
	// LiveRateUnknown saying why.
	LiveRate        *LiveRateCheck `json:"live_rate"`
	LiveRateUnknown string         `json:"live_rate_unknown,omitempty"`
	Coverage        []CoverageRun  `json:"coverage"`
}

// ScaleConsole is a console polling the keyspace at the shipped defaults (or at the [scan]
// settings of --config): when its first figures came, and what it cost the server.
type ScaleConsole struct {
	KeysPerSecond  int     `json:"keys_per_second"`
	MaxRedisTime   float64 `json:"max_redis_time"` // a share of each master's core, 0.008 for 0.8%
	RefreshSeconds float64 `json:"refresh_seconds"`
	Seconds        float64 `json:"seconds"` // how long it polled
	Polls          int     `json:"polls"`
	KeysSwept      int64   `json:"keys_swept"`
	// FirstFigures is the seconds from the Watcher's start to the end of the first poll after
	// which every main family's keys had an estimate with its interval; AllFigures the same for
	// every family, the trials' included. Nil when it did not come within the poll's time.
	FirstFigures *float64 `json:"first_figures_seconds"`
	AllFigures   *float64 `json:"all_families_figures_seconds"`
	// IdleCPU is Redis' CPU (INFO cpu: used_cpu_sys + used_cpu_user, summed over the masters)
	// with nobody asking, CPU the same while the console polls, and CPUOverIdle the difference,
	// all in percent of one core.
	IdleCPU     float64 `json:"idle_redis_cpu_percent"`
	CPU         float64 `json:"redis_cpu_percent"`
	CPUOverIdle float64 `json:"redis_cpu_over_idle_percent"`
	// ServerTime is Redis' time on every command meanwhile (INFO commandstats), in percent of
	// one core, and ByCommand that time by command, µs.
	ServerTime *float64           `json:"server_time_percent"`
	ByCommand  map[string]float64 `json:"by_command_usec"`
}

// CoverageRun is the estimates of a sweep under way (no budget, the shipped COUNT) once it has
// seen a share of the keyspace, against the exact figures written.
type CoverageRun struct {
	Target   float64 `json:"target"`   // the share asked for
	Coverage float64 `json:"coverage"` // the Snapshot's Scan.Coverage when it was taken
	Seconds  float64 `json:"seconds"`  // from the sweep's start
	// Figures are the main families' keys and current windows' totals, from the sweep's start.
	Figures []ScaleFigure `json:"figures"`
	// Windows is how many disjoint stretches of the sweep, each of the share asked for, the
	// trials were taken in (the first from the sweep's start).
	Windows int `json:"windows"`
	// Keys and Totals are the trials of the trial families' keys and current hours' totals, in
	// every stretch; Tagged and Plain split both by whether the family's keys share hash tags.
	Keys   TrialStats `json:"trial_keys"`
	Totals TrialStats `json:"trial_totals"`
	Tagged TrialStats `json:"trial_tagged"`
	Plain  TrialStats `json:"trial_plain"`
}

// ScaleFigure is one estimate beside the exact value written.
type ScaleFigure struct {
	Family   string   `json:"family"`
	Figure   string   `json:"figure"` // "keys", or "hour 2026070114 total"
	Exact    int64    `json:"exact"`
	Estimate float64  `json:"estimate"`
	Low      float64  `json:"low"`
	High     *float64 `json:"high"` // nil when the figure is only what was seen so far
	// RelError is (estimate − exact) ÷ exact; nil when the figure is only what was seen so far
	// (then it is no estimate) or exact is 0.
	RelError *float64 `json:"rel_error"`
	Inside   bool     `json:"inside"` // low ≤ exact ≤ high
}

// TrialStats is how the intervals of a set of trials fared.
type TrialStats struct {
	Trials       int      `json:"trials"`
	WithInterval int      `json:"with_interval"` // the rest were only what was seen so far
	Inside       int      `json:"inside"`
	HitRate      *float64 `json:"hit_rate"` // inside ÷ with_interval; nil when none had one
	// MedianAbsErr and MaxAbsErr are of the relative errors of the estimates with an interval.
	MedianAbsErr float64 `json:"median_abs_rel_error"`
	MaxAbsErr    float64 `json:"max_abs_rel_error"`
	// Missed is the trials whose interval did not hold the truth.
	Missed []ScaleFigure `json:"missed,omitempty"`
}

// ScaleGoals says whether the run met each goal; nil when a figure it needs is unknown.
type ScaleGoals struct {
	FirstFigures *bool `json:"first_figures_2s"`          // every keyspace's first figures within 2 s
	TotalsAt5    *bool `json:"main_figures_at_5pct_2pct"` // one server, 5%: every main figure within ±2%
	HitRate      *bool `json:"hit_rate_90pct"`            // every coverage and keyspace: keys and totals ≥ 90%
	ConsoleCPU   *bool `json:"console_cpu_1pct"`          // one server: the console's CPU over idle < 1% of a core
	LiveRate     *bool `json:"live_rate_5pct"`            // one server: the live rate's median within ±5% of the true rate
	LiveHits     *bool `json:"live_hit_rate_90pct"`       // every keyspace: the live rates' and this hours' intervals ≥ 90%
}

// RunScale loads the scale keyspaces on servers of its own, one after the other, and measures
// each: the load, a console at the defaults, and the estimates at each coverage.
func RunScale(ctx context.Context, opt ScaleOptions) (*ScaleReport, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Defaults == nil {
		return nil, errors.New("bench: no built-in config to take the console's defaults from")
	}
	if opt.ConsoleFor <= 0 {
		opt.ConsoleFor = 30 * time.Second
	}
	if opt.LiveFor <= 0 {
		opt.LiveFor = defaultLiveFor
	}
	if !(opt.LiveRate > 0) || opt.LiveRate > maxLiveRate {
		opt.LiveRate = defaultLiveRate
	}
	begun := time.Now()
	rep := &ScaleReport{Trials: scaleTrials, TrialsFrom: trialsFrom,
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())}
	if err := scaleOne(ctx, opt, rep, 1, opt.Keys); err != nil {
		return nil, err
	}
	if opt.ClusterKeys > 0 {
		if err := scaleOne(ctx, opt, rep, 3, opt.ClusterKeys); err != nil {
			return nil, err
		}
	}
	rep.settle()
	rep.Seconds = since(begun)
	return rep, nil
}

// trialsFrom is the report's account of the trials.
const trialsFrom = "50 trial families in each keyspace, each with its own tuples, windows and value draws; " +
	"SCAN's order follows the hash of each key's name, so the keys a partial sweep has seen are a sample " +
	"drawn apart for each family: each family's estimate in each disjoint stretch of the sweep is one trial"

// scaleOne starts a server (masters 1) or a cluster, loads keys, and measures it.
func scaleOne(ctx context.Context, opt ScaleOptions, rep *ScaleReport, masters int, keys int64) error {
	kind := "server"
	var addrs []string
	var stop func()
	route := router(func(string) int { return 0 })
	var err error
	if masters == 1 {
		var addr string
		addr, stop, err = startServer()
		addrs = []string{addr}
	} else {
		kind = "cluster"
		var owners []int
		addrs, owners, stop, err = startCluster(ctx, masters)
		route = slotRouter(owners)
	}
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(opt.Log, "hourglass: bench --scale: %s of %d at %v, writing %s keys\n", kind, masters, addrs, commas(int(keys)))
	rdb := scaleClient(addrs)
	defer rdb.Close()
	nodes := nodeClients(addrs)
	defer closeAll(nodes)
	if rep.RedisVersion == "" {
		rep.RedisVersion = (&bencher{ctx: ctx, meter: &meter{stats: nodes[0]}}).redisVersion()
	}
	sv, err := measureScale(ctx, opt, rdb, nodes, route, addrs, keys)
	if err != nil {
		return fmt.Errorf("bench --scale, %s: %w", kind, err)
	}
	sv.Kind, sv.Masters = kind, masters
	rep.Servers = append(rep.Servers, *sv)
	return nil
}

func nodeClients(addrs []string) []*redis.Client {
	var out []*redis.Client
	for _, a := range addrs {
		out = append(out, redis.NewClient(&redis.Options{Addr: a, PoolSize: 2}))
	}
	return out
}

func closeAll(cs []*redis.Client) {
	for _, c := range cs {
		c.Close()
	}
}

// measureScale loads the keyspace and measures it: the load, the console, the coverages, then the
// console again, its live rate against a known injected rate.
func measureScale(ctx context.Context, opt ScaleOptions, rdb redis.UniversalClient, nodes []*redis.Client, route router,
	addrs []string, keys int64) (*ScaleServer, error) {
	fams := scaleFamilies(time.Now().UTC())
	start := time.Now()
	exacts, err := loadScale(ctx, addrs, route, fams, keys, loadWorkers())
	if err != nil {
		return nil, err
	}
	sv := &ScaleServer{LoadSeconds: since(start)}
	var written int64
	for _, ex := range exacts {
		written += ex.Keys
	}
	for _, n := range nodes {
		size, err := n.DBSize(ctx).Result()
		if err != nil {
			return nil, err
		}
		sv.Keys += size
		sv.UsedMemory += infoInt(ctx, n, "memory", "used_memory")
	}
	if sv.Keys != written {
		return nil, fmt.Errorf("wrote %d keys, and the servers hold %d", written, sv.Keys)
	}
	sv.LoadKeysPerSec = float64(written) / sv.LoadSeconds
	fmt.Fprintf(opt.Log, "hourglass: bench --scale: %s keys in %.1f s; a console at the defaults for %v\n",
		commas(int(written)), sv.LoadSeconds, opt.ConsoleFor)
	families := make([]*store.Family, len(fams))
	for i, sf := range fams {
		families[i] = sf.fam
	}
	var cp *consolePoll
	if sv.Console, cp, err = consoleAtDefaults(ctx, opt, rdb, nodes, families, fams); err != nil {
		return nil, err
	}
	fmt.Fprintf(opt.Log, "hourglass: bench --scale: the estimates at %v coverage\n", scaleCoverages)
	cdb := scaleClient(addrs)
	defer cdb.Close()
	if sv.Coverage, err = coverageRuns(ctx, opt, cdb, fams, exacts, written); err != nil {
		return nil, err
	}
	// Last: the events it injects change the totals the coverages are set beside.
	fmt.Fprintf(opt.Log, "hourglass: bench --scale: the console again, its live rate against %.0f events/s injected, for %v after %v\n",
		opt.LiveRate, opt.LiveFor, opt.LiveFor/4)
	sv.LiveRate, sv.LiveRateUnknown, err = liveRateAtDefaults(ctx, opt, cp, addrs, fams, exacts, keys)
	return sv, err
}

// scaleClient is a client of the keyspace's server, or of its cluster when it has several
// masters. The console, the coverages' sweep and the live rate's writer have one each, as a
// console, a `snapshot` and an `hourglass inject` in other terminals would: the console's Redis
// time, which paces its sweep, counts its own commands only.
func scaleClient(addrs []string) redis.UniversalClient {
	if len(addrs) == 1 {
		return redis.NewClient(&redis.Options{Addr: addrs[0], PoolSize: 16})
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: 16})
}
