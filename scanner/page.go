package scanner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// page reads the family keys the previous SCAN returned (pending) and, at the same time on
// another connection, runs the next SCAN from cursor when scan is true, so Redis reads one page
// while hourglass classifies the next. It returns the keys read, the next cursor and the family
// keys the new SCAN found, to read next time.
func (s *Sweep) page(ctx context.Context, addr string, c redis.Cmdable, cursor uint64, pending []Key, scan bool) (Page, uint64, []Key, error) {
	var wg sync.WaitGroup
	var readErr error
	m := master{addr: addr, c: c, tune: s.tunerOf(addr)}
	if len(pending) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readErr = s.readTimed(ctx, m, pending)
		}()
	}
	var (
		names []string
		next  uint64
		found []Key
		err   error
	)
	if scan {
		// This SCAN runs beside the reads, so its round trip may hold some of theirs: it bounds
		// the call more loosely than Run's, and its tuner, shared with Run's, sees it as slower.
		count := m.tune.scanCount()
		start := time.Now()
		names, next, err = c.Scan(ctx, cursor, "", int64(count)).Result()
		if err == nil {
			m.tune.scanned(count, time.Since(start))
		}
		err = s.refusal("SCAN", "", err)
		if err == nil {
			var samples []string
			found, samples = s.classify(addr, false, names)
			err = s.readSamples(ctx, c, samples)
		}
	}
	wg.Wait()
	if readErr != nil {
		return Page{}, 0, nil, readErr
	}
	if err != nil {
		return Page{}, 0, nil, err
	}
	return Page{Seen: len(names), Keys: pending}, next, found, nil
}

// read fills pending's TTLs and values in one pipeline.
//
// Values are read with MGET, one per chunk of up to chunk keys (at most valueChunk; of one hash
// slot on a cluster node, where one command may not span slots): Redis spends much of a small
// command's cost on dispatching it, so PTTLs and one MGET cost less than PTTL and GET for every
// key. Each chunk's MGET follows its keys' PTTLs, so Redis finds those keys still in its CPU's
// cache. MGET answers nil for a key that is not a string; those few are read again with GET,
// which says WRONGTYPE.
//
// A read-only script that returns each key's TTL and value (EVALSHA_RO) was measured against
// this and costs Redis more: each redis.call from Lua costs about as much as a pipelined
// command's whole dispatch, and the script's reply is built twice (docs/benchmarks.md).
func (s *Sweep) read(ctx context.Context, c redis.Cmdable, pending []Key, chunk int) error {
	if len(pending) == 0 {
		return nil
	}
	if n := countStructures(pending); n > 0 {
		// Structure keys are few beside counters; they are read with their own commands.
		counters := make([]Key, 0, len(pending)-n)
		var structs []int
		for i := range pending {
			if pending[i].kind == kindCounter {
				counters = append(counters, pending[i])
			} else {
				structs = append(structs, i)
			}
		}
		if err := s.readStructures(ctx, c, pending, structs); err != nil {
			return err
		}
		if len(counters) == 0 {
			return nil
		}
		if err := s.read(ctx, c, counters, chunk); err != nil {
			return err
		}
		j := 0
		for i := range pending {
			if pending[i].kind == kindCounter {
				pending[i] = counters[j]
				j++
			}
		}
		return nil
	}
	pipe := c.Pipeline()
	ttls, gets := s.queueReads(ctx, pipe, pending, chunk)
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return err
	}
	var recheck []int // keys MGET had no string for, though PTTL found them
	for i := range pending {
		k := &pending[i]
		if err := readTTL(k, ttls[i]); err != nil {
			return s.refusal("PTTL", k.Name, err)
		}
		v, ok, err := gets.value(i)
		if err != nil {
			return s.refusal("MGET", k.Name, err)
		}
		switch {
		case ok:
			k.Value = v
		case !k.Gone:
			recheck = append(recheck, i)
		}
	}
	if len(recheck) > 0 {
		return s.recheck(ctx, c, pending, recheck)
	}
	return nil
}

// valueReads are the MGETs of one page: key i's value is reply pos[i].at of cmds[pos[i].cmd].
type valueReads struct {
	cmds []*redis.SliceCmd
	pos  []struct{ cmd, at int }
}

// valueChunk is the most keys one MGET reads. Redis reads a chunk's keys for their PTTLs just
// before, so they are still in its CPU's cache; a page's 1000 keys are not by the time a single
// MGET after all their PTTLs comes to the first of them. An MGET of 100 counters takes Redis
// 30–90 µs, well under the default MaxCall; a smaller MaxCall makes the chunks smaller (tuner).
const valueChunk = 100

// queueReads queues on pipe a PTTL for every key and the MGETs of their values: a chunk of keys'
// PTTLs, then their MGET, then the next chunk. On a standalone server a chunk is up to chunk keys
// (1 to valueChunk) in page order; on a cluster node, up to chunk keys of one hash slot.
func (s *Sweep) queueReads(ctx context.Context, pipe redis.Pipeliner, keys []Key, chunk int) ([]*redis.DurationCmd, *valueReads) {
	chunk = max(1, min(chunk, valueChunk))
	ttls := make([]*redis.DurationCmd, len(keys))
	r := &valueReads{pos: make([]struct{ cmd, at int }, len(keys))}
	queue := func(idx []int) {
		names := make([]string, len(idx))
		for j, i := range idx {
			ttls[i] = pipe.PTTL(ctx, keys[i].Name)
			names[j] = keys[i].Name
			r.pos[i] = struct{ cmd, at int }{len(r.cmds), j}
		}
		r.cmds = append(r.cmds, pipe.MGet(ctx, names...))
	}
	for _, idx := range bySlot(s.rdb, len(keys), func(i int) string { return keys[i].Name }) {
		for len(idx) > 0 {
			n := min(len(idx), chunk)
			queue(idx[:n])
			idx = idx[n:]
		}
	}
	return ttls, r
}

// value returns key i's value; ok is false when MGET had none (no key, or not a string).
func (r *valueReads) value(i int) (string, bool, error) {
	p := r.pos[i]
	vals, err := r.cmds[p.cmd].Result()
	if err != nil {
		return "", false, err
	}
	if p.at >= len(vals) {
		return "", false, fmt.Errorf("MGET answered %d values for more keys", len(vals))
	}
	switch v := vals[p.at].(type) {
	case string:
		return v, true, nil
	case nil:
		return "", false, nil
	default:
		return fmt.Sprint(v), true, nil
	}
}

// recheck reads with GET the keys (indexes into keys) that PTTL found but MGET had no string for:
// GET's WRONGTYPE marks them, and a key gone meanwhile is marked gone.
func (s *Sweep) recheck(ctx context.Context, c redis.Cmdable, keys []Key, idx []int) error {
	pipe := c.Pipeline()
	gets := make([]*redis.StringCmd, len(idx))
	for j, i := range idx {
		gets[j] = pipe.Get(ctx, keys[i].Name)
	}
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return err
	}
	for j, i := range idx {
		k := &keys[i]
		v, err := gets[j].Result()
		switch {
		case err == redis.Nil:
			k.Gone = true
		case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			k.WrongType = true
		case err != nil:
			return s.refusal("GET", k.Name, err)
		default:
			k.Value = v // it became a string between the two reads
		}
	}
	return nil
}

// readTTL fills k's TTL from its PTTL reply.
func readTTL(k *Key, ttl *redis.DurationCmd) error {
	d, err := ttl.Result()
	if err != nil { // PTTL has no per-key error: this is the server refusing (NOPERM) or failing
		return err
	}
	switch {
	case d == -2*time.Nanosecond || d == -2*time.Millisecond:
		k.Gone = true
	case d < 0:
		k.TTL = NoTTL
	default:
		k.TTL = d
	}
	return nil
}

// KeyLevel reports whether a pipeline error is one key's reply (nil or a Redis error reply), so
// the other replies still stand.
func KeyLevel(err error) bool {
	var rerr redis.Error
	return err == redis.Nil || errors.As(err, &rerr)
}

// bySlot groups the indexes of n keys (name gives key i's) for commands of many keys: on a
// cluster, by hash slot, since one command may not span slots, in the order each slot first
// comes; elsewhere all in one group, in order.
func bySlot(rdb redis.UniversalClient, n int, name func(int) string) [][]int {
	if _, cluster := rdb.(*redis.ClusterClient); !cluster {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
	var groups [][]int
	slots := map[int]int{} // slot -> its group
	for i := range n {
		sl := store.Slot(name(i))
		g, ok := slots[sl]
		if !ok {
			g = len(groups)
			slots[sl] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}
