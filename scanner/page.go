package scanner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// page reads the family keys the previous SCAN returned (pending) and, at the same time on
// another connection, runs the next SCAN from cursor when scan is true, so Redis reads one page
// while hourglass classifies the next. It returns the keys read, the next cursor and the family
// keys the new SCAN found, to read next time.
func (s *Sweep) page(ctx context.Context, c redis.Cmdable, cursor uint64, pending []Key, scan bool) (Page, uint64, []Key, error) {
	var wg sync.WaitGroup
	var readErr error
	if len(pending) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readErr = s.read(ctx, c, pending)
		}()
	}
	var (
		names []string
		next  uint64
		found []Key
		err   error
	)
	if scan {
		names, next, err = c.Scan(ctx, cursor, "", int64(s.count)).Result()
		err = s.refusal("SCAN", "", err)
		if err == nil {
			var samples []string
			found, samples = s.classify(names)
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
// Values are read with MGET, one per page (per hash slot on a cluster node, where one command may
// not span slots): Redis spends most of a small command's cost on dispatching it, so a page of
// PTTLs and one MGET costs about half of PTTL and GET for every key. MGET answers nil for a key
// that is not a string; those few are read again with GET, which says WRONGTYPE.
func (s *Sweep) read(ctx context.Context, c redis.Cmdable, pending []Key) error {
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
		if err := s.read(ctx, c, counters); err != nil {
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
	ttls := make([]*redis.DurationCmd, len(pending))
	for i, k := range pending {
		ttls[i] = pipe.PTTL(ctx, k.Name)
	}
	gets := s.queueValues(ctx, pipe, pending)
	if _, err := pipe.Exec(ctx); err != nil && !keyLevel(err) {
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

// queueValues queues MGETs for keys on pipe: one for all of them on a standalone server, one per
// hash slot on a cluster node.
func (s *Sweep) queueValues(ctx context.Context, pipe redis.Pipeliner, keys []Key) *valueReads {
	r := &valueReads{pos: make([]struct{ cmd, at int }, len(keys))}
	if len(keys) == 0 {
		return r
	}
	if _, cluster := s.rdb.(*redis.ClusterClient); !cluster {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name
			r.pos[i] = struct{ cmd, at int }{0, i}
		}
		r.cmds = append(r.cmds, pipe.MGet(ctx, names...))
		return r
	}
	bySlot := map[int][]int{}
	var slots []int
	for i, k := range keys {
		sl := store.Slot(k.Name)
		if bySlot[sl] == nil {
			slots = append(slots, sl)
		}
		bySlot[sl] = append(bySlot[sl], i)
	}
	for _, sl := range slots {
		idx := bySlot[sl]
		names := make([]string, len(idx))
		for j, i := range idx {
			names[j] = keys[i].Name
			r.pos[i] = struct{ cmd, at int }{len(r.cmds), j}
		}
		r.cmds = append(r.cmds, pipe.MGet(ctx, names...))
	}
	return r
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
	if _, err := pipe.Exec(ctx); err != nil && !keyLevel(err) {
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

// keyLevel reports whether a pipeline error is one key's reply (nil or a Redis error reply), so
// the other replies still stand.
func keyLevel(err error) bool {
	var rerr redis.Error
	return err == redis.Nil || errors.As(err, &rerr)
}
