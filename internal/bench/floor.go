package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// incrbyFloor adds ARGV[i] to KEYS[i] and does nothing else: no exactly-once record, no expiry,
// no check of its arguments, no reply but 1. Whatever a script that counts these keys does, it
// costs Redis at least this. KEYS, ARGV and redis.call are read into locals once, as the counter
// script reads them, so that the floors spend no more than it on Lua's globals.
var incrbyFloor = redis.NewScript(`local keys, argv, call = KEYS, ARGV, redis.call
for i = 1, #keys do call('INCRBY', keys[i], argv[i]) end
return 1`)

// expiryFloor is incrbyFloor plus the least that keeping each key's window-aligned expiry costs,
// asked of every key at every write so that a key that lost its TTL gets it back: PEXPIREAT ... NX
// (ARGV[2i-1] the delta, ARGV[2i] the expiry), or before Redis 7.0 a PTTL and PEXPIREAT where
// there is none, as the counter script does. It is the least a write can do and still heal a lost
// TTL at the next write: the writer's goal on keys that are there is set against it.
var expiryFloor = redis.NewScript(`local keys, argv, call = KEYS, ARGV, redis.call
local nx = (redis.REDIS_VERSION_NUM or 0) >= 0x070000
for i = 1, #keys do
  call('INCRBY', keys[i], argv[2 * i - 1])
  if nx then
    call('PEXPIREAT', keys[i], argv[2 * i], 'NX')
  elseif call('PTTL', keys[i]) == -1 then
    call('PEXPIREAT', keys[i], argv[2 * i])
  end
end
return 1`)

// floorCase is one floor measured beside the writer's steady cases: a script that only counts,
// 32 pairs a call in pipelines of 16 calls, on the keys the writer's steady case wrote.
type floorCase struct {
	name   string
	id     string // its name in Report.ServerTime
	expiry bool   // expiryFloor rather than incrbyFloor
	conns  int
}

// floorPlan is the floors in the order Report.Floors holds them; floorAfter says which run after
// which writer case (by its index in writerPlan): each on the keys that case left, all there with
// their TTL, on as many connections.
var (
	floorPlan = []floorCase{
		{name: "INCRBY-only floor, 1 connection, pipelines of 16, 32 pairs a call", id: "incrby_floor_c1", conns: 1},
		{name: "INCRBY and PEXPIREAT NX floor, 1 connection", id: "expiry_floor_c1", expiry: true, conns: 1},
		{name: "INCRBY-only floor, 4 connections, pipelines of 16, 32 pairs a call", id: "incrby_floor_c4", conns: 4},
		{name: "INCRBY and PEXPIREAT NX floor, 4 connections", id: "expiry_floor_c4", expiry: true, conns: 4},
	}
	floorAfter = map[int][]int{6: {0, 1}, 7: {2, 3}}
)

// floorRate is one floor: key pairs and script calls a second, and what Redis spent.
type floorRate struct {
	Case          string   `json:"case"`
	PairsPerSec   float64  `json:"pairs_per_sec"`
	ScriptsPerSec float64  `json:"scripts_per_sec"`
	ServerUsPair  *float64 `json:"server_us_per_pair"`
	LongestCallUs *float64 `json:"longest_call_us_at_most"`
}

// FloorFigures are the floors' server time a key pair and the writer's over them.
type FloorFigures struct {
	IncrbyFloorC1 *float64 `json:"incrby_floor_c1_server_us_per_pair"`
	IncrbyFloorC4 *float64 `json:"incrby_floor_c4_server_us_per_pair"`
	ExpiryFloorC1 *float64 `json:"expiry_floor_c1_server_us_per_pair"`
	ExpiryFloorC4 *float64 `json:"expiry_floor_c4_server_us_per_pair"`
	// The writer's steady time over the INCRBY-only floor on as many connections: the goal's
	// ratio; the expiry floor's over the same; the INCRBY-only floor's over redis-benchmark's
	// single-pair call on keys that are there.
	WriterSteadyC1VsFloor *float64 `json:"writer_steady_c1_server_us_per_pair_vs_floor"`
	WriterSteadyC4VsFloor *float64 `json:"writer_steady_c4_server_us_per_pair_vs_floor"`
	ExpiryFloorC1VsFloor  *float64 `json:"expiry_floor_c1_server_us_per_pair_vs_floor"`
	ExpiryFloorC4VsFloor  *float64 `json:"expiry_floor_c4_server_us_per_pair_vs_floor"`
	IncrbyFloorC1VsRB     *float64 `json:"incrby_floor_c1_server_us_per_pair_vs_redis_benchmark"`
	IncrbyFloorC4VsRB     *float64 `json:"incrby_floor_c4_server_us_per_pair_vs_redis_benchmark"`
	// The writer's steady time over the INCRBY and PEXPIREAT NX floor's on as many connections:
	// the least a write can cost and still heal a lost TTL at the next write. The goals' ratios.
	WriterSteadyC1VsExpiryFloor *float64 `json:"writer_steady_c1_server_us_per_pair_vs_expiry_floor"`
	WriterSteadyC4VsExpiryFloor *float64 `json:"writer_steady_c4_server_us_per_pair_vs_expiry_floor"`
}

// floorRate is floor c's row from its rounds: wall-clock rates over all of them, Redis' time that
// of the least round (sumRuns), filed as the floor's server time.
func (b *bencher) floorRate(c floorCase, runs []caseRun) floorRate {
	all, st, _ := sumRuns(runs)
	r := floorRate{Case: c.name, PairsPerSec: all.pairs / all.secs, ScriptsPerSec: all.calls / all.secs}
	if st != nil {
		b.server[c.id] = st
		r.ServerUsPair, r.LongestCallUs = &st.UsPer, st.LongestAtMost
	}
	return r
}

// floor sends events key pairs, drawn as the writer's cases draw them (so every key is one the
// case before wrote), 32 pairs a call and 16 calls a pipeline on each of c.conns connections.
func (b *bencher) floor(st *store.Store, fam *store.Family, events int, c floorCase) (caseRun, error) {
	script := incrbyFloor
	if c.expiry {
		script = expiryFloor
	}
	if err := script.Load(b.ctx, b.rdb).Err(); err != nil {
		return caseRun{}, err
	}
	tuples := b.tuples()
	r := rand.New(rand.NewPCG(7, 8))
	draws := make([]int, events)
	for i := range draws {
		draws[i] = r.IntN(len(tuples))
	}
	now := st.Now()
	var wins [2]store.Window
	var exps [2]string
	for g, gran := range []store.Granularity{store.Hour, store.Day} {
		wins[g] = store.WindowAt(gran, now, fam.Zone(st.Location()))
		exps[g] = strconv.FormatInt(fam.ExpireAt(wins[g]).UnixMilli(), 10)
	}
	const pairs, depth = 32, 16
	calls := (events + pairs - 1) / pairs
	errs := make([]error, c.conns)
	var secs float64
	mk := b.meter.start(b.ctx)
	err := func() error {
		var wg sync.WaitGroup
		start := time.Now()
		for conn := range c.conns {
			wg.Go(func() {
				// This connection's calls are conn, conn+conns, ...; a pipeline of depth of them.
				pipe := b.rdb.Pipeline()
				for call := conn; call < calls && b.ctx.Err() == nil; call += c.conns {
					keys, args := make([]string, 0, 2*pairs), make([]any, 0, 4*pairs)
					for _, d := range draws[call*pairs : min((call+1)*pairs, events)] {
						for g := range wins {
							key, err := fam.Key(wins[g], tuples[d])
							if err != nil {
								errs[conn] = err
								return
							}
							keys, args = append(keys, key), append(args, "1")
							if c.expiry {
								args = append(args, exps[g])
							}
						}
					}
					script.EvalSha(b.ctx, pipe, keys, args...)
					if pipe.Len() == depth || call+c.conns >= calls {
						if _, err := pipe.Exec(b.ctx); err != nil {
							errs[conn] = err
							return
						}
					}
				}
			})
		}
		wg.Wait()
		secs = time.Since(start).Seconds()
		return errors.Join(append(errs, b.ctx.Err())...)
	}()
	if err != nil {
		return caseRun{}, fmt.Errorf("%s: %w", c.name, err)
	}
	return caseRun{events: float64(events), pairs: float64(events), calls: float64(calls), secs: secs,
		st: b.meter.since(b.ctx, mk, float64(events), "key pair", nil)}, nil
}

// settleFloors takes the floors' figures and their ratios; s holds the writer's and
// redis-benchmark's.
func (r *Report) settleFloors(s *ServerFigures) {
	f := &r.FloorFigures
	us := func(j int) *float64 {
		if j >= len(r.Floors) {
			return nil
		}
		return r.Floors[j].ServerUsPair
	}
	f.IncrbyFloorC1, f.ExpiryFloorC1, f.IncrbyFloorC4, f.ExpiryFloorC4 = us(0), us(1), us(2), us(3)
	f.WriterSteadyC1VsFloor, f.WriterSteadyC4VsFloor = ratio(s.WriterSteadyC1, f.IncrbyFloorC1), ratio(s.WriterSteadyC4, f.IncrbyFloorC4)
	f.ExpiryFloorC1VsFloor, f.ExpiryFloorC4VsFloor = ratio(f.ExpiryFloorC1, f.IncrbyFloorC1), ratio(f.ExpiryFloorC4, f.IncrbyFloorC4)
	f.WriterSteadyC1VsExpiryFloor = ratio(s.WriterSteadyC1, f.ExpiryFloorC1)
	f.WriterSteadyC4VsExpiryFloor = ratio(s.WriterSteadyC4, f.ExpiryFloorC4)
	f.IncrbyFloorC1VsRB, f.IncrbyFloorC4VsRB = ratio(f.IncrbyFloorC1, s.RBSteadyC1), ratio(f.IncrbyFloorC4, s.RBSteadyC4)
}
