package bench

import (
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// rawSetBits and rawGetBits are the least a Bloom filter's add and check cost Redis: SETBIT (or
// GETBIT) of each position handed in, ARGV[1] positions an element, nothing computed, looked up
// or counted. The filter's scripts are measured beside them on the same positions.
var (
	rawSetBits = redis.NewScript(`local k = tonumber(ARGV[1])
for i = 2, #ARGV, k do
  for j = 0, k - 1 do redis.call('SETBIT', KEYS[1], ARGV[i + j], 1) end
end
return 1`)
	rawGetBits = redis.NewScript(`local k, held = tonumber(ARGV[1]), 0
for i = 2, #ARGV, k do
  local all = 1
  for j = 0, k - 1 do
    if redis.call('GETBIT', KEYS[1], ARGV[i + j]) == 0 then all = 0 end
  end
  held = held + all
end
return held`)
)

// BloomReport is the Bloom filter's cases: elements a second added and checked, Redis' time on
// each, and the raw SETBIT/GETBIT scripts' on the same positions.
type BloomReport struct {
	Elements   int      `json:"elements"`
	Hashes     int      `json:"hashes"`
	Add        float64  `json:"adds_per_sec"`
	Check      float64  `json:"checks_per_sec"`
	AddUs      *float64 `json:"add_server_us_per_element"`
	CheckUs    *float64 `json:"check_server_us_per_element"`
	RawSetUs   *float64 `json:"raw_setbit_server_us_per_element"`
	RawGetUs   *float64 `json:"raw_getbit_server_us_per_element"`
	AddVsRaw   *float64 `json:"add_vs_raw_setbit"`
	CheckVsRaw *float64 `json:"check_vs_raw_getbit"`
}

// bloom adds n elements to a filter sized for them (0.01, one sub-filter), BloomBatch a call
// from 16 goroutines, then checks n (half added, half never), then runs the raw scripts on the
// same positions on a bitmap of the same size.
func (b *bencher) bloom(rep *Report, st *store.Store, n int) error {
	key := store.BenchKey("bloom")
	f, err := st.Bloom(key, store.BloomOptions{Capacity: int64(n), ErrorRate: 0.01})
	if err != nil {
		return err
	}
	calls := (n + store.BloomBatch - 1) / store.BloomBatch
	batch := func(prefix string, i int) []string {
		out := make([]string, 0, store.BloomBatch)
		for j := i * store.BloomBatch; j < min((i+1)*store.BloomBatch, n); j++ {
			out = append(out, prefix+strconv.Itoa(j))
		}
		return out
	}
	r := &BloomReport{Elements: n}
	add, err := b.measure("bloom_add", float64(n), "element", func() (err error) {
		r.Add, err = b.parallel(calls, func(i int) error { _, err := f.AddMany(b.ctx, batch("e", i)...); return err })
		return err
	})
	if err != nil {
		return err
	}
	check, err := b.measure("bloom_check", float64(n), "element", func() (err error) {
		r.Check, err = b.parallel(calls, func(i int) error {
			prefix := "e"
			if i%2 == 1 {
				prefix = "never"
			}
			_, err := f.ExistsMany(b.ctx, batch(prefix, i)...)
			return err
		})
		return err
	})
	if err != nil {
		return err
	}
	r.Add, r.Check = r.Add*float64(n)/float64(calls), r.Check*float64(n)/float64(calls) // calls a second to elements
	meta, err := store.ReadBloomMeta(b.ctx, b.rdb, key)
	if err != nil {
		return err
	}
	if len(meta.Parts) != 1 {
		return fmt.Errorf("bench: the bloom filter has %d sub-filters, sized for one", len(meta.Parts))
	}
	part := meta.Parts[0]
	r.Hashes = part.Hashes
	set, get, err := b.bloomRaw(part, n, calls, batch)
	if err != nil {
		return err
	}
	r.AddUs, r.CheckUs, r.RawSetUs, r.RawGetUs = perUnit(add), perUnit(check), perUnit(set), perUnit(get)
	r.AddVsRaw, r.CheckVsRaw = ratio(r.AddUs, r.RawSetUs), ratio(r.CheckUs, r.RawGetUs)
	rep.Bloom = r
	return nil
}

// bloomRaw runs the raw SETBIT and GETBIT scripts on the positions the filter's sub-filter gives
// the n elements, batch by batch, on a bitmap of its own.
func (b *bencher) bloomRaw(part store.BloomPart, n, calls int, batch func(string, int) []string) (set, get *ServerTime, err error) {
	raw := store.BenchKey("bloom-raw")
	positions := func(prefix string, i int) []any {
		args := []any{part.Hashes}
		for _, e := range batch(prefix, i) {
			h1, h2 := store.BloomHashes(e)
			for j := range int64(part.Hashes) {
				args = append(args, store.BloomBit(h1, h2, j, part.Bits))
			}
		}
		return args
	}
	set, err = b.measure("bloom_raw_setbit", float64(n), "element", func() error {
		_, err := b.parallel(calls, func(i int) error { return rawSetBits.Run(b.ctx, b.rdb, []string{raw}, positions("e", i)...).Err() })
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	get, err = b.measure("bloom_raw_getbit", float64(n), "element", func() error {
		_, err := b.parallel(calls, func(i int) error {
			prefix := "e"
			if i%2 == 1 {
				prefix = "never"
			}
			return rawGetBits.Run(b.ctx, b.rdb, []string{raw}, positions(prefix, i)...).Err()
		})
		return err
	})
	return set, get, err
}
