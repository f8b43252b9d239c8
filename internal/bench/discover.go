package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// DiscoverReport is what the keys no entry claims cost a sweep: the same keyspace swept with a
// config that claims every key and with none, its memory at two key counts and two group counts,
// and a sweep held to a budget.
type DiscoverReport struct {
	Keys   int `json:"keys"`
	Groups int `json:"groups"` // the groups discover found in it
	// Sweep is keys/s with a config that claims every key (counter families; lock, delay and list
	// queue patterns for the rest), each key's TTL and value read; Discover with no config,
	// every key counted into discover's groups and a few of each group read.
	Sweep    float64 `json:"sweep_keys_per_sec"`
	Discover float64 `json:"discover_keys_per_sec"`
	RawScan  float64 `json:"raw_scan_keys_per_sec"`
	// Redis' CPU a key, from INFO cpu, in each pass.
	SweepRedisNs    float64 `json:"sweep_redis_cpu_ns_per_key"`
	DiscoverRedisNs float64 `json:"discover_redis_cpu_ns_per_key"`
	// Redis' time on each pass's commands a key, from INFO commandstats, and the ratio of the
	// pass with no config to the one with.
	SweepServerUs    *float64 `json:"sweep_server_us_per_key"`
	DiscoverServerUs *float64 `json:"discover_server_us_per_key"`
	ServerUsVsSweep  *float64 `json:"discover_server_us_per_key_vs_sweep"`
	// Heap is the Go heap the sweep holds after it ends (live bytes after a GC, less those before
	// it began) for keyspaces of 1/10 the keys, and of 10 times the groups.
	Heap []DiscoverHeap `json:"heap"`
	// HeapPerGroup is the heap a group adds: the growth from Heap's groups to 10 times as many,
	// over the groups added.
	HeapPerGroup float64 `json:"heap_bytes_per_group"`
	// HeapKeysRatio is the heap with 10 times the keys in as many groups over the heap before.
	HeapKeysRatio float64 `json:"heap_10x_keys_ratio"`
	// Budget is the keys_per_second a discover sweep was held to, Budgeted what it reached, and
	// BudgetTolerance what the pacer allows: it waits after each page, not before the first.
	Budget          int     `json:"budget_keys_per_sec"`
	Budgeted        float64 `json:"budgeted_keys_per_sec"`
	BudgetTolerance float64 `json:"budget_tolerance"`
}

// DiscoverHeap is the heap a discover sweep held over one keyspace.
type DiscoverHeap struct {
	Keys   int   `json:"keys"`
	Groups int   `json:"groups"`
	Bytes  int64 `json:"bytes"`
}

// The discover keyspace: discoverGroups groups of keys no counter family claims, a quarter each
// of cache strings, hashes, sorted sets and lists, beside counter keys in hour and day windows.
const (
	discoverGroups  = 100
	discoverCounter = 0.6 // the share of counter keys
	discoverCount   = 1000
)

// discoverSteps is how many steps of the progress line discoverCase takes.
const discoverSteps = 5

// discoverCase measures the discover case on keyspaces of n and n/10 keys.
func (b *bencher) discoverCase(n int) (*DiscoverReport, error) {
	rep := &DiscoverReport{Keys: n}
	b.step("discover: %s keys, %d groups not claimed by a counter family", commas(n), discoverGroups)
	if err := b.fillDiscover(n, discoverGroups); err != nil {
		return nil, err
	}
	var err error
	if rep.RawScan, _, err = b.rawScanPass(discoverCount); err != nil {
		return nil, err
	}
	b.step("discover: a sweep with a config that claims every key")
	var seen, read int
	mk := b.meter.start(b.ctx)
	cpu0, start := b.cpu(), time.Now()
	s := scanner.New(b.rdb, discoverFamilies(), scanner.Options{Count: discoverCount, Location: time.UTC, Structures: discoverStructures()})
	if err := s.Run(b.ctx, func(p scanner.Page) { seen += p.Seen; read += len(p.Keys) }); err != nil {
		return nil, err
	}
	rep.Sweep = float64(seen) / time.Since(start).Seconds()
	rep.SweepRedisNs = 1e9 * (b.cpu() - cpu0) / float64(max(seen, 1))
	if st := b.meter.since(b.ctx, mk, float64(seen), "key", nil); st != nil {
		b.server["discover_config_sweep"], rep.SweepServerUs = st, &st.UsPer
	}
	if b.own && read != seen { // a given server may hold keys of its own, which no entry claims
		return nil, fmt.Errorf("the config claimed %d of %d keys", read, seen)
	}
	b.step("discover: the same keys with no config")
	heap, err := b.discoverSweep(rep, n, 0)
	if err != nil {
		return nil, err
	}
	rep.Groups = heap.Groups
	rep.Heap = append(rep.Heap, heap)
	small := max(n/10, 100)
	b.step("discover: %s keys, %d groups, and a sweep held to a budget", commas(small), discoverGroups)
	if err := b.fillDiscover(small, discoverGroups); err != nil {
		return nil, err
	}
	if heap, err = b.discoverSweep(nil, small, 0); err != nil {
		return nil, err
	}
	rep.Heap = append([]DiscoverHeap{heap}, rep.Heap...)
	rep.Budget = max(small/2, 50) // about two seconds
	if _, err := b.discoverSweep(rep, small, rep.Budget); err != nil {
		return nil, err
	}
	b.step("discover: %s keys, %s groups", commas(n), commas(10*discoverGroups))
	if err := b.fillDiscover(n, 10*discoverGroups); err != nil {
		return nil, err
	}
	if heap, err = b.discoverSweep(nil, n, 0); err != nil {
		return nil, err
	}
	rep.Heap = append(rep.Heap, heap)
	base := rep.Heap[1]
	if rep.Heap[0].Bytes > 0 {
		rep.HeapKeysRatio = float64(base.Bytes) / float64(rep.Heap[0].Bytes)
	}
	if heap.Groups > base.Groups {
		rep.HeapPerGroup = float64(heap.Bytes-base.Bytes) / float64(heap.Groups-base.Groups)
	}
	return rep, nil
}

// discoverSweep sweeps the n keys there are with no config and returns the heap it held. With
// rep, it sets rep's discover figures: with a budget, those of the budget; without, its speed.
func (b *bencher) discoverSweep(rep *DiscoverReport, n, budget int) (DiscoverHeap, error) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var seen, read, pages int
	s := scanner.New(b.rdb, nil, scanner.Options{Count: discoverCount, Location: time.UTC, KeysPerSecond: budget})
	mk := b.meter.start(b.ctx)
	cpu0, start := b.cpu(), time.Now()
	err := s.Run(b.ctx, func(p scanner.Page) {
		seen += p.Seen
		read += len(p.Keys)
		pages++
	})
	secs := time.Since(start).Seconds()
	if err != nil {
		return DiscoverHeap{}, err
	}
	cpu := b.cpu() - cpu0
	runtime.GC()
	runtime.ReadMemStats(&ms)
	held := int64(ms.HeapAlloc) - int64(before)
	r := s.Unclaimed()
	runtime.KeepAlive(s)
	if seen < n || read != 0 || b.own && r.Keys != int64(seen) {
		return DiscoverHeap{}, fmt.Errorf("discover: saw %d keys of %d, read %d, counted %d unclaimed", seen, n, read, r.Keys)
	}
	switch {
	case rep != nil && budget > 0:
		rep.Budgeted = float64(seen) / secs
		rep.BudgetTolerance = float64(seen) / float64(max(seen-seen/max(pages, 1), 1))
	case rep != nil:
		rep.Discover = float64(seen) / secs
		rep.DiscoverRedisNs = 1e9 * cpu / float64(max(seen, 1))
		if st := b.meter.since(b.ctx, mk, float64(seen), "key", nil); st != nil {
			b.server["discover"], rep.DiscoverServerUs = st, &st.UsPer
		}
	}
	return DiscoverHeap{Keys: seen, Groups: len(r.Groups), Bytes: held}, nil
}

// cpu is Redis' CPU seconds, or 0 when INFO fails (the figures from it are then left out).
func (b *bencher) cpu() float64 {
	c, _ := redisCPU(b.ctx, b.rdb)
	return c
}

// discoverFamilies are the counter families of the discover keyspace.
func discoverFamilies() []*store.Family {
	var fams []*store.Family
	for _, spec := range []store.FamilySpec{
		{Name: "hits", Pattern: store.BenchKey("hits:<app>:<user>:<window>"), HourFormat: "yyyyMMddHH",
			HourRetention: 48 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour},
		{Name: "flow", Pattern: store.BenchKey("flow:<device>:<ip>:<window>"), HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour},
	} {
		f, err := store.NewFamily(spec)
		if err != nil {
			panic(err) // the specs above are valid
		}
		fams = append(fams, f)
	}
	return fams
}

// discoverStructures claim the discover keyspace's other keys: cache strings and hashes by lock
// patterns (a hash is then read as a lock that holds the wrong type), sorted sets by a delay queue
// pattern and lists by a list queue pattern, so each is read with PTTL and one command.
func discoverStructures() scanner.Structures {
	p := func(kind string) *store.Pattern {
		pat, err := store.ParseKeyPattern(store.BenchKey("<team>:<service>:<app>:" + kind + ":<id>"))
		if err != nil {
			panic(err)
		}
		return pat
	}
	return scanner.Structures{
		Locks:       []scanner.LockSpec{{Name: "cache", Pattern: p("cache")}, {Name: "users", Pattern: p("user")}},
		DelayQueues: []scanner.DelayQueueSpec{{Name: "history", Pattern: p("hist"), Unit: store.Milliseconds}},
		ListQueues:  []scanner.ListQueueSpec{{Name: "jobs", Pattern: p("jobs")}},
	}
}

// fillDiscover empties the keyspace and writes n keys: counter keys of two families in hour and
// day windows, and the rest spread over groups groups.
func (b *bencher) fillDiscover(n, groups int) error {
	if err := b.clean(); err != nil {
		return err
	}
	now := time.Now().UTC()
	hours := make([]string, 24)
	for h := range hours {
		hours[h] = now.Add(-time.Duration(h) * time.Hour).Format("2006010215")
	}
	day, nowMS := now.Format("20060102"), float64(now.UnixMilli())
	counters := int(float64(n) * discoverCounter)
	for start := 0; start < n; start += 10_000 {
		pipe := b.rdb.Pipeline()
		for i := start; i < min(start+10_000, n); i++ {
			if i < counters {
				key, ttl := discoverCounterKey(i, hours[i%24], day)
				pipe.Set(b.ctx, key, i%1000, ttl)
				continue
			}
			discoverGroupKey(b, pipe, i, groups, nowMS)
		}
		if _, err := pipe.Exec(b.ctx); err != nil {
			return err
		}
	}
	return nil
}

// discoverCounterKey is the i-th counter key, with its TTL.
func discoverCounterKey(i int, hour, day string) (string, time.Duration) {
	switch i % 3 {
	case 0:
		return store.BenchKey(fmt.Sprintf("hits:app%d:u%d:%s", i%13, i/3, hour)), 48 * time.Hour
	case 1:
		return store.BenchKey(fmt.Sprintf("hits:app%d:u%d:%s", i%13, i/3, day)), 30 * 24 * time.Hour
	}
	return store.BenchKey(fmt.Sprintf("flow:dev%d:10.%d.%d.%d:%s", i%1000, i>>16&255, i>>8&255, i&255, hour)), 48 * time.Hour
}

// discoverGroupKey writes the i-th key of the groups no family claims: group i%groups, named
// bench:<team>:<service>:<app>:<kind>:<id>, where team, service and app are words that tell the
// groups apart, up to ten of each, so that discover keeps them as literals (up to 1,000 groups).
func discoverGroupKey(b *bencher, pipe redis.Pipeliner, i, groups int, nowMS float64) {
	g := i % groups
	r := g / 4
	key := store.BenchKey(word("team", r%10) + ":" + word("svc", r/10%10) + ":" + word("app", r/100) + ":" +
		[...]string{"cache", "user", "hist", "jobs"}[g%4] + ":" + strconv.Itoa(i))
	switch g % 4 {
	case 0:
		pipe.Set(b.ctx, key, `{"id":`+strconv.Itoa(i)+`,"name":"someone","plan":"pro","seen":true}`, time.Hour)
	case 1:
		pipe.HSet(b.ctx, key, "name", "someone", "plan", "pro", "visits", i%100)
	case 2:
		pipe.ZAdd(b.ctx, key, redis.Z{Score: nowMS - 60_000, Member: "a"}, redis.Z{Score: nowMS, Member: "b"})
	default:
		pipe.RPush(b.ctx, key, "task-1", "task-2")
	}
}

// word is prefix and two letters for i (below 676): a word of letters, as discover reads names.
func word(prefix string, i int) string {
	return prefix + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
}
