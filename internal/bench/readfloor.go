package bench

import (
	"maps"
	"slices"
)

// The read floor is the least Redis can spend to give a sweep every key's TTL and value. Redis
// 7.0 has no command that returns many keys' TTLs, and a script a page costs more than commands,
// so that least is SCAN, a PTTL a key and its share of an MGET. The floor sends those and nothing
// else, at the sweep's COUNT, each page read right after its SCAN (while Redis still has its keys
// in its CPU's cache). The sweep's server time a key is held to it, pass by pass.

// readFloorChunk is the keys one MGET of the read floor is given: the most the sweep's MGETs are
// given (scanner's valueChunk).
const readFloorChunk = 100

// ReadFloorFigures are the read floor's server time a key and the sweep's over it, over the
// passes; and each one's time a key by command, which says where the sweep's time above the
// floor goes.
type ReadFloorFigures struct {
	ReadFloorUs    *float64 `json:"read_floor_server_us_per_key"` // the median of the passes
	ReadFloorUsMin *float64 `json:"read_floor_server_us_per_key_min"`
	ReadFloorUsMax *float64 `json:"read_floor_server_us_per_key_max"`
	// Each pass's sweep server µs a key over the read floor's after it: the goal's ratio is the
	// median.
	SweepVsReadFloor    *float64 `json:"sweep_server_us_per_key_vs_read_floor"`
	SweepVsReadFloorMin *float64 `json:"sweep_server_us_per_key_vs_read_floor_min"`
	SweepVsReadFloorMax *float64 `json:"sweep_server_us_per_key_vs_read_floor_max"`
	// By INFO commandstats' name (scan, pttl, mget, get, type, evalsha...), over all passes.
	SweepByCommand     map[string]float64 `json:"sweep_server_us_per_key_by_command"`
	ReadFloorByCommand map[string]float64 `json:"read_floor_server_us_per_key_by_command"`
}

// readFloorPass SCANs the whole server at count and reads each page right after its SCAN, in one
// pipeline: a PTTL a key and an MGET a chunk of up to readFloorChunk keys, each chunk's PTTLs
// before its MGET, as the sweep queues them. It returns the keys seen.
func (b *bencher) readFloorPass(count int64) (int, error) {
	var cursor uint64
	var keys int
	for {
		page, next, err := b.rdb.Scan(b.ctx, cursor, "", count).Result()
		if err != nil {
			return 0, err
		}
		keys += len(page)
		if len(page) > 0 {
			pipe := b.rdb.Pipeline()
			for start := 0; start < len(page); start += readFloorChunk {
				chunk := page[start:min(start+readFloorChunk, len(page))]
				for _, k := range chunk {
					pipe.PTTL(b.ctx, k)
				}
				pipe.MGet(b.ctx, chunk...)
			}
			if _, err := pipe.Exec(b.ctx); err != nil {
				return 0, err
			}
		}
		if cursor = next; cursor == 0 {
			return keys, nil
		}
	}
}

// perKey is a case's time by command, a unit; nil when the case's time is unknown.
func perKey(st *ServerTime) map[string]float64 {
	if st == nil || st.Units <= 0 {
		return nil
	}
	m := make(map[string]float64, len(st.ByCommand))
	for name, usec := range st.ByCommand {
		m[name] = usec / st.Units
	}
	return m
}

// commandRest is, by command, the sweep's time a key less the read floor's: where the sweep's
// time above the floor goes. Commands are ordered by what they add, most first; nil when either
// is unknown.
func commandRest(sweep, floor map[string]float64) []commandTime {
	if sweep == nil || floor == nil {
		return nil
	}
	var rest []commandTime
	for _, name := range slices.Sorted(maps.Keys(sweep)) {
		rest = append(rest, commandTime{name, sweep[name] - floor[name]})
	}
	for name, us := range floor {
		if _, ok := sweep[name]; !ok {
			rest = append(rest, commandTime{name, -us})
		}
	}
	slices.SortStableFunc(rest, func(a, b commandTime) int {
		switch {
		case a.us > b.us:
			return -1
		case a.us < b.us:
			return 1
		}
		return 0
	})
	return rest
}

// commandTime is one command's time a key.
type commandTime struct {
	name string
	us   float64
}

// byCommand is a case's time a key by command, most first.
func byCommand(m map[string]float64) []commandTime {
	return commandRest(m, map[string]float64{})
}
