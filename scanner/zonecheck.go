package scanner

import (
	"fmt"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// A family's windows are cut in the zone its config names; its writers may cut them in another.
// Then the hour window current in the configured zone has no key while the one N hours away is
// the newest written, and every figure of the hour reads 0. The sweep notes each windowed
// family's newest hour window and says when the data contradicts the zone configured.

// zoneCheck returns the mismatch of family f's hour windows, whose starts (Unix seconds) hours
// holds, with the zone f's windows are cut in (loc, f's own or the sweep's) at now; nil when the
// data agrees or says nothing: no hour windows, the current one present, the newest more than a
// day old (a family no longer written), or the previous hour newest within discover.ZoneGrace of
// the boundary (the current hour has no key yet). host names this machine's zone (nil when
// unknown).
func zoneCheck(f *store.Family, loc *time.Location, now time.Time, hours func(yield func(int64) bool), host *time.Location) *snapshot.ZoneMismatch {
	if !f.Has(store.Hour) {
		return nil
	}
	cur := store.WindowAt(store.Hour, now, loc)
	newest, any := int64(0), false
	for start := range hours {
		if start == cur.Start.Unix() {
			return nil // the current hour is written
		}
		if !any || start > newest {
			newest, any = start, true
		}
	}
	if !any {
		return nil
	}
	nw := store.WindowAt(store.Hour, time.Unix(newest, 0), loc)
	if nw.End.Before(now.Add(-24 * time.Hour)) {
		return nil // dead: nothing written in the last day
	}
	n := int(wallHour(nw.Start).Sub(wallHour(cur.Start)) / time.Hour)
	if n == 0 || n == -1 && now.Sub(cur.Start) < discover.ZoneGrace {
		return nil
	}
	_, s := now.In(loc).Zone()
	cfgOff := time.Duration(s) * time.Second
	off := cfgOff + time.Duration(n)*time.Hour
	if lo, hi := discover.ZoneBounds(); off < lo || off > hi {
		return nil
	}
	wf, _ := f.Format(store.Hour)
	configured := fmt.Sprintf("%s (%s)", loc, discover.OffsetText(cfgOff))
	if loc.String() == "Local" && host != nil { // say which zone this machine's is
		configured = fmt.Sprintf("Local (%s, %s)", host, discover.OffsetText(cfgOff))
	}
	z := &snapshot.ZoneMismatch{
		Configured: configured,
		Data:       discover.ZoneName(off, host, now),
		Offset:     discover.OffsetText(off),
		Newest:     format.Escape(wf.Format(nw)),
		Hours:      n,
	}
	z.Message = fmt.Sprintf("windows look cut in UTC%s, not in %s: the newest hour window %s is the current hour at UTC%s; set timezone = %q",
		z.Offset, z.Configured, z.Newest, z.Offset, z.Data)
	return z
}

// wallHour is t's wall clock in its zone read as UTC, so that two windows' starts differ by the
// hours between their names, whatever DST does between them.
func wallHour(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, t.Hour(), 0, 0, 0, time.UTC)
}

// hourStarts yields the starts of the hour windows among a family's windows.
func hourStarts[T any](m map[winKey]T) func(yield func(int64) bool) {
	return func(yield func(int64) bool) {
		for k := range m {
			if k.g == store.Hour && !yield(k.start) {
				return
			}
		}
	}
}

// zoneChecks sets each windowed family's ZoneMismatch (counters, uniques and bitmaps) and adds its
// message to the Snapshot's warnings. Only a complete sweep's windows are checked: one under way
// may not have met the current hour's keys yet.
func (a *Aggregator) zoneChecks(snap *snapshot.Snapshot, now time.Time) {
	for i, fa := range a.order {
		z := zoneCheck(fa.f, fa.f.Zone(a.opt.Location), now, hourStarts(fa.windows), a.opt.HostZone)
		if z != nil && i < len(snap.Counters) {
			snap.Counters[i].ZoneMismatch = z
			// The current hour's window is read under the wrong name: its average is not known.
			snap.Counters[i].HourAvgPerSec, snap.Counters[i].HourAvgNote = nil, "not known: "+z.Message
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("counter family %s: %s", fa.f.Name(), z.Message))
		}
	}
	for i, spec := range a.structs.specs.Uniques {
		if i >= len(a.structs.uniques) || i >= len(snap.Uniques) {
			break
		}
		f := spec.Family
		z := zoneCheck(f, f.Zone(a.opt.Location), now, hourStarts(a.structs.uniques[i].windows), a.opt.HostZone)
		if z != nil {
			snap.Uniques[i].ZoneMismatch = z
			kind := "unique"
			if spec.Kind == store.Bitmap {
				kind = "bitmap"
			}
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s family %s: %s", kind, f.Name(), z.Message))
		}
	}
}
