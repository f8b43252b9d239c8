package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrExpired is returned for an event whose every window is already past its retention: written,
// it would expire at once.
var ErrExpired = errors.New("event is older than the family's retention")

// ErrFuture is returned for an event more than MaxAhead ahead of the Redis server clock: a clock
// that far off, or a time in the wrong unit, would write windows no one reads for days.
var ErrFuture = errors.New("event time is too far ahead of the server clock")

// MaxAhead is how far ahead of the server clock an event time may be.
const MaxAhead = 24 * time.Hour

// Value is the value of one counter key.
type Value struct {
	Window Window
	Key    string
	Value  int64
}

// Incr adds delta to the hour and day windows (those the family has) that hold at, in one script
// call, and returns their new values. A zero at means now by the Redis server clock. For many
// events use a Writer, which pre-aggregates them and pipelines the calls.
func (s *Store) Incr(ctx context.Context, f *Family, dims []string, delta int64, at time.Time) ([]Value, error) {
	now := s.serverNow(ctx)
	if at.IsZero() {
		at = now
	}
	if at.Sub(now) > MaxAhead {
		return nil, fmt.Errorf("store: incr %s: %w (%v)", f.name, ErrFuture, at)
	}
	var vals []Value
	var keys []string
	args := []any{0, 0, 0} // no sequence: a single call is not resent by the store
	for _, g := range f.Granularities() {
		w := WindowAt(g, at, f.Zone(s.loc))
		exp := f.ExpireAt(w)
		if !exp.After(now) {
			continue
		}
		key, err := f.Key(w, dims)
		if err != nil {
			return nil, fmt.Errorf("store: incr %s: %w", f.name, err)
		}
		vals = append(vals, Value{Window: w, Key: key})
		keys = append(keys, key)
		args = append(args, delta, exp.UnixMilli())
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("store: incr %s: %w", f.name, ErrExpired)
	}
	if len(keys) == 2 && Slot(keys[0]) != Slot(keys[1]) && isCluster(s.rdb) {
		return nil, fmt.Errorf("store: incr %s: hour and day keys are in different cluster slots; wrap the dims in a hash tag", f.name)
	}
	// KEYS[1] is the sequence key, unused here; the first counter key stands in so that a
	// cluster routes the call to the counters' slot.
	reply, err := incrWindows.Run(ctx, s.rdb, append([]string{keys[0]}, keys...), args...).Result()
	if err != nil {
		return nil, fmt.Errorf("store: incr %s: %w", f.name, err)
	}
	got, errs := incrValues(reply, keys)
	for i := range vals {
		vals[i].Value = got[i]
	}
	return vals, errors.Join(errs...)
}

// Get returns the value of the window of granularity g holding at (server now when zero). A key
// that does not exist is 0.
func (s *Store) Get(ctx context.Context, f *Family, g Granularity, dims []string, at time.Time) (Value, error) {
	vals, err := s.GetMany(ctx, f, g, [][]string{dims}, at)
	if len(vals) == 0 {
		return Value{}, err
	}
	return vals[0], err
}

// GetMany returns, for each dims tuple, the value of the window of granularity g holding at,
// read in one pipeline.
func (s *Store) GetMany(ctx context.Context, f *Family, g Granularity, dimsList [][]string, at time.Time) ([]Value, error) {
	byGran, err := s.getWindows(ctx, f, []Granularity{g}, dimsList, at)
	return byGran[g], err
}

// GetWindows is GetMany for every granularity the family has, all read in one pipeline, so an
// hour and a day total taken together come from the same instant however fast writes arrive.
func (s *Store) GetWindows(ctx context.Context, f *Family, dimsList [][]string, at time.Time) (map[Granularity][]Value, error) {
	return s.getWindows(ctx, f, f.Granularities(), dimsList, at)
}

func (s *Store) getWindows(ctx context.Context, f *Family, gs []Granularity, dimsList [][]string, at time.Time) (map[Granularity][]Value, error) {
	at = s.eventTime(ctx, at)
	all := make([]Value, 0, len(gs)*len(dimsList))
	for _, g := range gs {
		w := WindowAt(g, at, f.Zone(s.loc))
		for _, dims := range dimsList {
			key, err := f.Key(w, dims)
			if err != nil {
				return nil, fmt.Errorf("store: get %s: %w", f.name, err)
			}
			all = append(all, Value{Window: w, Key: key})
		}
	}
	err := s.readValues(ctx, all)
	byGran := make(map[Granularity][]Value, len(gs))
	for i, g := range gs {
		byGran[g] = all[i*len(dimsList) : (i+1)*len(dimsList)]
	}
	return byGran, err
}

// Series returns the last n windows of granularity g up to and including the one holding end
// (server now when zero), oldest first, read in one pipeline. Values that cannot be read are 0
// in the series and reported in the error, so a caller can still draw the rest. An hour repeated
// when the clocks go back is one key, so it is one point whose window spans both hours.
func (s *Store) Series(ctx context.Context, f *Family, g Granularity, dims []string, n int, end time.Time) ([]Value, error) {
	if n <= 0 {
		return nil, nil
	}
	vals := make([]Value, n)
	w := WindowAt(g, s.eventTime(ctx, end), f.Zone(s.loc))
	for i := n - 1; i >= 0; w = w.Prev() {
		key, err := f.Key(w, dims)
		if err != nil {
			return nil, fmt.Errorf("store: series %s: %w", f.name, err)
		}
		if i < n-1 && key == vals[i+1].Key {
			vals[i+1].Window.Start = w.Start
			continue
		}
		vals[i] = Value{Window: w, Key: key}
		i--
	}
	return vals, s.readValues(ctx, vals)
}

// readValues fills vals[i].Value from GET of vals[i].Key in one pipeline.
func (s *Store) readValues(ctx context.Context, vals []Value) error {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(vals))
	for i := range vals {
		cmds[i] = pipe.Get(ctx, vals[i].Key)
	}
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return fmt.Errorf("store: read counters: %w", err)
	}
	var errs []error
	for i, cmd := range cmds {
		v, err := cmd.Result()
		switch {
		case err == redis.Nil:
			continue
		case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			errs = append(errs, &KeyError{Key: vals[i].Key, Err: ErrWrongType})
		case err != nil:
			errs = append(errs, fmt.Errorf("store: read %q: %w", vals[i].Key, err))
		default:
			n, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil {
				errs = append(errs, &KeyError{Key: vals[i].Key, Value: v, Err: ErrNotInteger})
				continue
			}
			vals[i].Value = n
		}
	}
	return errors.Join(errs...)
}

// KeyLevel reports whether a pipeline error is about one key's reply (nil or a Redis error
// reply) rather than the connection, so the other replies are still good.
func KeyLevel(err error) bool {
	var rerr redis.Error
	return err == redis.Nil || errors.As(err, &rerr)
}

func isCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}
