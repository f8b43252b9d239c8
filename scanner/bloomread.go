package scanner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// Reading the filters a sweep found, at its end (Sweep.Finish): ours by their metadata and
// their sub-filters' bits (bloomfigure.go), RedisBloom's by BF.INFO and BF.DEBUG
// (bloommodule.go). Every call waits for the sweep's budget and is charged to it (a BITCOUNT
// a key per 4 KiB it reads, as a bitmap's is), and each holds Redis well under a millisecond: a
// HGETALL of a few dozen fields, BITCOUNTs of at most 64 KB, pipelines of STRLEN and MEMORY
// USAGE of one filter's keys (at most 33).

// bloomTries is how many times a call that fails for a passing reason (store.ClassOf) is sent.
const bloomTries = 3

// bloomRand draws the byte ranges a sweep counts of a sampled sub-filter: new ones each sweep.
var bloomRand = func() *rand.Rand { return rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x626c6f6f6d)) }

// readBlooms reads each entry's filters.
func (s *Sweep) readBlooms(ctx context.Context, wants []bloomWant) map[int]bloomRead {
	out := map[int]bloomRead{}
	rng := bloomRand()
	for _, w := range wants {
		un := bloomUnread{counts: map[string]int64{}, labels: map[string]string{}}
		r := bloomRead{filters: []snapshot.BloomFilter{}}
		for _, f := range w.filters {
			if ctx.Err() != nil {
				un.add("not read: the sweep ended first", "not read: the sweep ended first")
				continue
			}
			var bf *snapshot.BloomFilter
			if f.typ == bloomModule {
				bf = s.readModuleBloom(ctx, f, &un)
			} else {
				bf = s.readOwnBloom(ctx, f, rng, &un)
			}
			if bf != nil {
				r.filters = append(r.filters, *bf)
			}
		}
		r.unreadable = un.counts
		out[w.spec] = r
	}
	return out
}

// bloomUnread counts the keys not read as filters under one line per cause, which names the
// first key that had it.
type bloomUnread struct {
	counts map[string]int64
	labels map[string]string // cause -> its line
}

func (u *bloomUnread) add(cause, line string) {
	l, ok := u.labels[cause]
	if !ok {
		l = line
		u.labels[cause] = l
	}
	u.counts[l]++
}

// refused counts key under a command's failure: one line naming the command, the key and the
// cause.
func (u *bloomUnread) refused(cmd, key string, err error) {
	cause := strings.TrimSpace(err.Error())
	u.add(cmd+": "+cause, fmt.Sprintf("%s %s: %s", cmd, format.Escape(key), cause))
}

// call runs one command (or pipeline) once the budget allows it, charging cost keys, and sends
// it again when it fails for a passing reason.
func (s *Sweep) call(ctx context.Context, cost int, fn func() error) error {
	var err error
	for try := range bloomTries {
		if s.pace != nil {
			if err := s.pace.Wait(ctx); err != nil {
				return err
			}
		}
		err = fn()
		s.pace.Spend(max(cost, 1))
		if err == nil || err == redis.Nil || store.ClassOf(err) != store.ClassTransient || try == bloomTries-1 {
			return err
		}
		if err := store.Sleep(ctx, time.Duration(try+1)*50*time.Millisecond); err != nil {
			return err
		}
	}
	return err
}

// readOwnBloom reads one of our filters: its metadata, its sub-filters' sizes and memory, and
// their bits. nil when it is not one (counted in un) or is gone.
func (s *Sweep) readOwnBloom(ctx context.Context, f bloomFound, rng *rand.Rand, un *bloomUnread) *snapshot.BloomFilter {
	var h map[string]string
	if err := s.call(ctx, 1, func() (err error) { h, err = s.rdb.HGetAll(ctx, f.key).Result(); return err }); err != nil {
		un.refused("HGETALL", f.key, err)
		return nil
	}
	if len(h) == 0 {
		return nil // deleted since its page
	}
	meta, err := store.ParseBloomMeta(f.key, h)
	if err != nil {
		why := strings.TrimPrefix(err.Error(), "store: bloom "+f.key+": ")
		un.add("meta: "+why, "a hash without a filter's metadata ("+format.Escape(f.key)+": "+format.Escape(why)+")")
		return nil
	}
	target := meta.ErrorRate
	subs := len(meta.Parts)
	bf := &snapshot.BloomFilter{Key: format.Escape(f.key), Raw: f.key, Layout: "hourglass", Capacity: &meta.Capacity, Expansion: &meta.Expansion,
		SubFilters: &subs, TargetRate: &target, Added: &meta.Added, TTLMS: ttlMS(f.ttl)}
	strlens, ok := s.bloomSizes(ctx, bf, meta, un)
	if !ok {
		return nil
	}
	parts := make([]partCount, len(meta.Parts))
	for i, p := range meta.Parts {
		if strlens[i] < 0 {
			return nil
		}
		if strlens[i] == 0 {
			bf.Notes = append(bf.Notes, fmt.Sprintf("sub-filter %d's bitmap %s is absent: read as all zeros", i, format.Escape(p.Key)))
		}
		pc, err := countPart(p.Bits, strlens[i], p.Hashes, rng, func(from, to int64) (n int64, err error) {
			err = s.call(ctx, bitmapCost(to-from+1), func() error {
				n, err = store.BloomBitsSet(ctx, s.rdb, p.Key, from, to)
				return err
			})
			return n, err
		})
		if err != nil {
			un.refused("BITCOUNT", p.Key, unwrapStore(err))
			return nil
		}
		parts[i] = pc
	}
	bloomFigures(bf, parts)
	return bf
}

// unwrapStore drops the store's prefix ("store: bloom KEY: BITCOUNT: ") from a reply's error.
func unwrapStore(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); strings.HasPrefix(msg, "store: ") && i >= 0 {
		return fmt.Errorf("%s", msg[i+2:])
	}
	return err
}

// bloomSizes reads, in one pipeline, each sub-filter's STRLEN and MEMORY USAGE of the metadata
// hash and each sub-filter, setting bf.MemoryBytes (nil, with a note, when refused). ok is false
// when the filter cannot be read (counted in un); a sub-filter's key of another type is -1.
func (s *Sweep) bloomSizes(ctx context.Context, bf *snapshot.BloomFilter, meta store.BloomMeta, un *bloomUnread) ([]int64, bool) {
	var lens, mem []*redis.IntCmd
	err := s.call(ctx, 2*len(meta.Parts)+1, func() error {
		pipe := s.rdb.Pipeline()
		lens, mem = make([]*redis.IntCmd, len(meta.Parts)), []*redis.IntCmd{pipe.MemoryUsage(ctx, meta.Key)}
		for i, p := range meta.Parts {
			lens[i] = pipe.StrLen(ctx, p.Key)
			mem = append(mem, pipe.MemoryUsage(ctx, p.Key))
		}
		_, err := pipe.Exec(ctx)
		if KeyLevel(err) {
			return nil
		}
		return err
	})
	if err != nil {
		un.refused("STRLEN", meta.Key, err)
		return nil, false
	}
	out := make([]int64, len(lens))
	for i, c := range lens {
		n, err := c.Result()
		if err != nil {
			un.refused("STRLEN", meta.Parts[i].Key, err)
			return nil, false
		}
		out[i] = n
	}
	var total int64
	for _, c := range mem {
		n, err := c.Result()
		switch {
		case err == redis.Nil: // an absent sub-filter holds nothing
		case err != nil:
			bf.Notes = append(bf.Notes, "memory unknown: MEMORY USAGE "+format.Escape(c.Args()[2].(string))+": "+strings.TrimSpace(err.Error()))
			return out, true
		default:
			total += n
		}
	}
	bf.MemoryBytes = &total
	return out, true
}
