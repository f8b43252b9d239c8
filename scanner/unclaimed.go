package scanner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
)

// Keys that no family or structure claims are never dropped silently: the sweep counts each into
// its discover group by name, and reads a few keys of each group (type, TTL, memory, and a
// string's first bytes, a collection's size or a sorted set's lowest and highest scores), so the
// Snapshot can say how many there are, what they weigh, and what they look like.

// sampleReads is what a sweep learnt about reading samples: a command the server refuses is not
// asked again in the same sweep.
type sampleReads struct {
	mu        sync.Mutex
	memoryErr string // why MEMORY USAGE is not read
	refused   string // why samples are not read at all (TIME, TYPE, PTTL or a value's read refused)
}

// sampleTime is the server's clock for samples: the pipelined TIME's answer, or on a replica the
// primary's clock.
func (s *Sweep) sampleTime(clock *redis.TimeCmd) (time.Time, error) {
	if clock == nil {
		return s.clock(), nil
	}
	return clock.Result()
}

// readSamples reads the sampled unclaimed keys names on c, in two pipelines, and hands each to
// the sweep's groups. A command the server refuses (NOPERM) stops that part of the sampling for
// the rest of the sweep; only a failure of the connection is returned.
func (s *Sweep) readSamples(ctx context.Context, c redis.Cmdable, names []string) error {
	if len(names) == 0 || s.groups == nil {
		return nil
	}
	s.samples.mu.Lock()
	refused, memoryErr := s.samples.refused, s.samples.memoryErr
	s.samples.mu.Unlock()
	if refused != "" {
		return nil
	}
	pipe := c.Pipeline()
	var clock *redis.TimeCmd
	if s.clock == nil {
		clock = pipe.Time(ctx)
	}
	types := make([]*redis.StatusCmd, len(names))
	ttls := make([]*redis.DurationCmd, len(names))
	mems := make([]*redis.IntCmd, len(names))
	for i, name := range names {
		types[i] = pipe.Type(ctx, name)
		ttls[i] = pipe.PTTL(ctx, name)
		if memoryErr == "" {
			mems[i] = pipe.MemoryUsage(ctx, name)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return err
	}
	now, err := s.sampleTime(clock)
	if err != nil {
		return s.refuseSamples("TIME", err)
	}
	samples := make([]discover.Sample, len(names))
	for i, name := range names {
		t, err := types[i].Result()
		if err != nil {
			return s.refuseSamples("TYPE", err)
		}
		ttl, err := ttls[i].Result()
		if err != nil {
			return s.refuseSamples("PTTL", err)
		}
		samples[i] = discover.Sample{Name: name, Type: t, TTL: ttl, Bytes: -1, Now: now}
		if ttl < 0 {
			samples[i].TTL = -1
		}
		if mems[i] != nil {
			n, err := mems[i].Result()
			switch {
			case err == nil:
				samples[i].Bytes = n
			case err != redis.Nil:
				memoryErr = "MEMORY USAGE refused: " + strings.TrimSpace(err.Error())
				samples[i].BytesErr = memoryErr
			}
		}
	}
	if memoryErr != "" {
		s.samples.mu.Lock()
		s.samples.memoryErr = memoryErr
		s.samples.mu.Unlock()
	}
	if err := readSampleValues(ctx, c, samples); err != nil {
		var r *refusedRead
		if errors.As(err, &r) {
			return s.refuseSamples(r.cmd, r.err)
		}
		return err
	}
	for _, sm := range samples {
		s.groups.AddSample(sm)
	}
	return nil
}

// refuseSamples stops sampling for the sweep when the server refused cmd (the sweep's counts by
// name go on), and returns err when it was not a refusal.
func (s *Sweep) refuseSamples(cmd string, err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return err
	}
	s.samples.mu.Lock()
	s.samples.refused = cmd + " refused: " + strings.TrimSpace(err.Error())
	s.samples.mu.Unlock()
	return nil
}

// refusedRead is a read of the samples' values that the server refused (NOPERM): without it the
// samples would mislead (a counter's value unread reads as no integer), so none is kept.
type refusedRead struct {
	cmd string
	err error
}

func (r *refusedRead) Error() string { return r.cmd + " refused: " + r.err.Error() }

// markRead are the reads of a library's mark (discover.HashField, discover.MemberRead).
var markRead = map[string]bool{"hget": true, "srandmember": true, "lindex": true}

// readSampleValues reads, by type, a string's length and first bytes, a collection's size, a
// sorted set's lowest and highest scores, the field discover.HashField names of a hash, and a
// member of a set or the first element of a list discover.MemberRead names. A key that changed type or went meanwhile keeps
// what the first read found. A read the server refuses is returned as a *refusedRead (a refused
// read of a library's mark only leaves it unread).
func readSampleValues(ctx context.Context, c redis.Cmdable, samples []discover.Sample) error {
	pipe := c.Pipeline()
	lens := make([]*redis.IntCmd, len(samples))
	vals := make([]*redis.StringCmd, len(samples))
	lows := make([]*redis.ZSliceCmd, len(samples))
	highs := make([]*redis.ZSliceCmd, len(samples))
	fields := make([]*redis.StringCmd, len(samples))
	members := make([]*redis.StringCmd, len(samples))
	for i, sm := range samples {
		switch sm.Type {
		case "string":
			lens[i] = pipe.StrLen(ctx, sm.Name)
			vals[i] = pipe.GetRange(ctx, sm.Name, 0, discover.ValuePrefix-1)
		case "zset":
			lens[i] = pipe.ZCard(ctx, sm.Name)
			lows[i] = pipe.ZRangeWithScores(ctx, sm.Name, 0, 0)
			highs[i] = pipe.ZRangeWithScores(ctx, sm.Name, -1, -1)
		case "list":
			lens[i] = pipe.LLen(ctx, sm.Name)
			if discover.MemberRead(sm.Name) {
				members[i] = pipe.LIndex(ctx, sm.Name, 0) // a job as the library pushes it, its mark
			}
		case "hash":
			lens[i] = pipe.HLen(ctx, sm.Name)
			if f := discover.HashField(sm.Name); f != "" {
				fields[i] = pipe.HGet(ctx, sm.Name, f) // the field a library writes there, its mark
			}
		case "set":
			lens[i] = pipe.SCard(ctx, sm.Name)
			if discover.MemberRead(sm.Name) {
				members[i] = pipe.SRandMember(ctx, sm.Name) // a member as the library writes it, its mark
			}
		case "stream":
			lens[i] = pipe.XLen(ctx, sm.Name)
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil && !KeyLevel(err) {
		return err
	}
	for _, cmd := range cmds {
		// A library's mark refused (HGET, SRANDMEMBER) leaves that mark unread; the rest of the
		// sample stands.
		if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOPERM") && !markRead[cmd.Name()] {
			return &refusedRead{cmd: strings.ToUpper(cmd.Name()), err: err}
		}
	}
	for i := range samples {
		sm := &samples[i]
		if lens[i] != nil {
			sm.Len, _ = lens[i].Result()
		}
		if vals[i] != nil {
			sm.Value, _ = vals[i].Result()
		}
		if fields[i] != nil {
			sm.Field, _ = fields[i].Result()
		}
		if members[i] != nil {
			sm.Member, _ = members[i].Result()
		}
		if lows[i] != nil {
			lo, err1 := lows[i].Result()
			hi, err2 := highs[i].Result()
			if err1 == nil && err2 == nil && len(lo) == 1 && len(hi) == 1 {
				sm.MinScore, sm.MaxScore = lo[0].Score, hi[0].Score
			} else {
				sm.Len = 0
			}
		}
	}
	return nil
}

// unclaimedResult is what the sweep's groups hold, ready for a Snapshot: examples escaped, and the
// reason no sample could be read, if any.
func (s *Sweep) unclaimedResult() discover.Result {
	if s == nil || s.groups == nil {
		return discover.Result{Groups: []discover.Group{}}
	}
	strata := map[string]discover.Stratum{}
	for addr, mp := range s.Progress().Masters {
		strata[addr] = discover.Stratum{DBSize: mp.DBSize, Done: mp.Done}
	}
	r := s.groups.Scaled(strata) // scaled while some master is not swept to its end
	s.samples.mu.Lock()
	refused := s.samples.refused
	s.samples.mu.Unlock()
	if refused != "" {
		r.BytesNote = refused + "; groups are by name only"
	}
	for i := range r.Groups {
		for j, ex := range r.Groups[i].Examples {
			r.Groups[i].Examples[j] = format.Escape(ex)
		}
	}
	return r
}

// Unclaimed is what the sweep has found so far of the keys no entry claims, as a Snapshot would
// hold it.
func (s *Sweep) Unclaimed() discover.Result { return s.unclaimedResult() }
