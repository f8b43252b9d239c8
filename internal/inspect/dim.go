package inspect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// The most windows of each granularity a dims tuple's detail reads: three days of hours and two
// months of days. A family may keep its windows longer; the detail then shows the newest of them,
// so one keypress never reads more than 134 keys (3 reads each, one pipeline).
const (
	maxDimHours = 72
	maxDimDays  = 62
)

// Dim reads every retained window of one dims tuple of family, hours then days, each oldest
// first and ending at the current window in the family's time zone: GET, PTTL and MEMORY USAGE of
// each window's key, in one pipeline. key is any of the tuple's keys (a window's key as the
// Snapshot's top lists hold it, DimsValue.RawKey): the tuple's dims are read from it.
//
// A key that is not there is Missing; one of another type or not an integer says so in its Note;
// a MEMORY USAGE the user may not run leaves MemoryBytes nil with a Note and the rest shown. A
// GET or PTTL Redis refuses ends the read with an error naming the command, the key and the user;
// a transient error is returned as it is. The keys read count against the sweep's budget.
func (in *Inspector) Dim(ctx context.Context, family, key string) (snapshot.DimDetail, error) {
	watched := in.w.Watched()
	fams, def := watched.Families, watched.Location
	var f *store.Family
	for _, ff := range fams {
		if ff.Name() == family {
			f = ff
		}
	}
	if f == nil {
		return snapshot.DimDetail{}, fmt.Errorf("inspect: no counter family %q", family)
	}
	if def == nil {
		def = time.Local
	}
	loc := f.Zone(def)
	dims, ok := tupleOf(f, key, loc)
	if !ok {
		return snapshot.DimDetail{}, fmt.Errorf("inspect: %s is not a key of the counter family %s", format.Escape(key), family)
	}
	now := in.w.Now()
	d := snapshot.DimDetail{Family: family, Dims: dimsOf(f.Dims(), dims), ReadAt: now}
	pipe := in.rdb.Pipeline()
	var reads []windowReads
	var current string // the current hour's key, or the current day's for a family without hours
	wins := retained(f, now, loc)
	if rate := in.w.KeysPerSecond(); rate > 0 && len(wins) > 2*rate {
		// A tuple read again at every refresh must leave the sweep most of its budget: at a low
		// keys_per_second only the newest windows are read (the current ones always).
		wins = newest(wins, 2*rate)
	}
	for _, win := range wins {
		k, err := f.Key(win, dims)
		if err != nil {
			return d, fmt.Errorf("inspect: %w", err)
		}
		if n := len(d.Windows); n > 0 && d.Windows[n-1].Key == k {
			continue // the hour the clocks go back over twice names one key
		}
		wf, _ := f.Format(win.Granularity)
		d.Windows = append(d.Windows, snapshot.WindowValue{Granularity: win.Granularity.String(), Window: wf.Format(win), Start: win.Start, Key: k,
			WantExpiresAt: f.ExpireAt(win)})
		reads = append(reads, windowReads{pipe.Get(ctx, k), pipe.PTTL(ctx, k), pipe.MemoryUsage(ctx, k, 0)})
		if win.Contains(now) && (current == "" || win.Granularity == store.Hour) {
			current = k
		}
	}
	_, err := pipe.Exec(ctx)
	in.w.Charge(len(reads))
	if err != nil && !keyLevel(err) {
		return d, err
	}
	for i := range d.Windows {
		if err := reads[i].fill(&d.Windows[i], now); err != nil {
			return d, in.refusal(err, d.Windows[i].Key)
		}
	}
	d.Command = in.RedisCLI("GET", current)
	return d, nil
}

// tupleOf reads the dims of one of family f's keys, in either granularity.
func tupleOf(f *store.Family, key string, loc *time.Location) ([]string, bool) {
	if f.Excludes(key) {
		return nil, false
	}
	for _, g := range f.Granularities() {
		if _, dims, ok := f.Match(g, key, loc); ok {
			return dims, true
		}
	}
	return nil, false
}

// retained is every window of f whose keys are kept at now (its expiry not passed), hours then
// days, each oldest first and ending at the current window, at most maxDimHours and maxDimDays.
func retained(f *store.Family, now time.Time, loc *time.Location) []store.Window {
	var out []store.Window
	for _, g := range f.Granularities() {
		most := maxDimHours
		if g == store.Day {
			most = maxDimDays
		}
		wins := []store.Window{store.WindowAt(g, now, loc)}
		for len(wins) < most {
			prev := wins[len(wins)-1].Prev()
			if !f.ExpireAt(prev).After(now) {
				break
			}
			wins = append(wins, prev)
		}
		for i := len(wins) - 1; i >= 0; i-- {
			out = append(out, wins[i])
		}
	}
	return out
}

// windowReads are one window key's replies.
type windowReads struct {
	get *redis.StringCmd
	ttl *redis.DurationCmd
	mem *redis.IntCmd
}

// fill puts the replies into v; a GET or PTTL Redis refused is returned, named.
func (r windowReads) fill(v *snapshot.WindowValue, now time.Time) error {
	var notes []string
	s, err := r.get.Result()
	switch {
	case err == redis.Nil:
		v.Missing = true
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		notes = append(notes, "holds another type than a string: not a counter")
	case err != nil:
		return &store.CommandError{Command: "GET", Key: v.Key, Err: err}
	default:
		if n, ok := scanner.ParseInteger(s); ok {
			v.Value = &n
		} else {
			notes = append(notes, "not a 64-bit integer: "+format.Escape(s))
		}
	}
	ttl, err := r.ttl.Result()
	switch {
	case err != nil:
		return &store.CommandError{Command: "PTTL", Key: v.Key, Err: err}
	case ttl == -2*time.Nanosecond || ttl == -2*time.Millisecond:
		v.TTLMS, v.Missing, v.Value = -2, true, nil // expired between the two reads
	case ttl < 0:
		v.TTLMS = -1
	default:
		v.TTLMS, v.ExpiresAt = ttl.Milliseconds(), now.Add(ttl)
	}
	mem, err := r.mem.Result()
	var re redis.Error
	switch {
	case err == nil && !v.Missing:
		v.MemoryBytes = &mem
	case errors.As(err, &re) && err != redis.Nil:
		why := "MEMORY USAGE refused: " // an ACL without it; another error: a server that has no such command
		if !strings.HasPrefix(err.Error(), "NOPERM") {
			why = "memory not read: MEMORY USAGE answered "
		}
		notes = append(notes, why+format.Escape(err.Error()))
	}
	v.Note = strings.Join(notes, "; ")
	return nil
}

// newest keeps the last most windows of wins (hours then days, each oldest first), taking from
// each granularity in proportion, so both still end at their current window.
func newest(wins []store.Window, most int) []store.Window {
	var hours, days []store.Window
	for _, w := range wins {
		if w.Granularity == store.Day {
			days = append(days, w)
		} else {
			hours = append(hours, w)
		}
	}
	keepDays := min(len(days), max(most*len(days)/len(wins), 1))
	keepHours := min(len(hours), max(most-keepDays, 1))
	return append(hours[len(hours)-keepHours:], days[len(days)-keepDays:]...)
}
