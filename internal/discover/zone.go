package discover

import (
	"fmt"
	"time"
)

// A window's name is its start's wall-clock time in the zone its writers cut windows in. Read as
// if UTC, the newest window being written lies ahead of the server's clock by that zone's offset
// (an hour window written in UTC+8 runs eight hours ahead of UTC): so the newest window of a
// group, against the server's TIME read with its samples, says which offsets it can be the current
// window at. Hour windows tell the offset to the hour; day windows only a range of a day's width.

// The offsets zones in use have: from UTC-12:00 to UTC+14:00.
const (
	minZoneOffset = -12 * time.Hour
	maxZoneOffset = 14 * time.Hour
	zoneStep      = 15 * time.Minute // offsets are whole quarter hours
)

// ZoneGrace is how long after a window's start the window before it may still be the newest
// written: a window has no key until its first write, and a family written a few times an hour
// may take that long to write one.
const ZoneGrace = 30 * time.Minute

// zoneFit is what a group's newest window says of the zone its windows are cut in, and the zone
// proposed from it.
type zoneFit struct {
	label  string // the newest window's text, e.g. 2026112612
	class  class
	newest time.Time // label read as UTC
	length time.Duration
	now    time.Time // the server's clock when the group's keys were read

	ok     bool          // a zone is proposed: offset and name
	offset time.Duration // the offset proposed
	name   string        // "UTC", the host's zone's name, or "+08:00"
	note   string        // the evidence line
}

// fits says whether the newest window is the current one at offset o, or the one before it
// within ZoneGrace of the current one's start.
func (z *zoneFit) fits(o time.Duration) (current, previous bool) {
	w := z.now.UTC().Add(o) // the wall clock at o, read as UTC as the label is
	end := z.newest.Add(z.length)
	return !w.Before(z.newest) && w.Before(end), !w.Before(end) && w.Before(end.Add(ZoneGrace))
}

// inferZone reads the zone of windows of class c whose newest is label, at the server time now;
// host is this machine's zone by name (nil when unknown), proposed by name when its offset is the
// data's. A zone fits when the newest window is its current one, or its previous one just after a
// boundary; of those that fit, the host's, then UTC's, then the whole hour nearest UTC's is
// proposed. Half and quarter hours are proposed only as the host's: hour windows cannot tell them
// from the whole hour beside them.
func inferZone(c class, label string, now time.Time, host *time.Location) zoneFit {
	z := zoneFit{label: label, class: c, now: now}
	start, length, ok := windowOf(c, label, time.UTC)
	if !ok || !c.dateWindow() || now.IsZero() {
		return z
	}
	z.newest, z.length = start, length
	hostOff, hasHost := time.Duration(0), host != nil
	if hasHost {
		_, s := now.In(host).Zone()
		hostOff = time.Duration(s) * time.Second
		hasHost = hostOff >= minZoneOffset && hostOff <= maxZoneOffset && hostOff%zoneStep == 0
	}
	type candidate struct {
		o        time.Duration
		previous bool
	}
	var cands []candidate
	if hasHost {
		cands = append(cands, candidate{hostOff, false})
	}
	cands = append(cands, candidate{0, false})
	if hasHost {
		cands = append(cands, candidate{hostOff, true})
	}
	cands = append(cands, candidate{0, true})
	for _, previous := range []bool{false, true} {
		for h := time.Hour; h <= maxZoneOffset; h += time.Hour {
			cands = append(cands, candidate{h, previous}, candidate{-h, previous})
		}
	}
	for _, cd := range cands {
		if cd.o < minZoneOffset || cd.o > maxZoneOffset {
			continue
		}
		if cur, prev := z.fits(cd.o); cd.previous && prev || !cd.previous && cur {
			z.ok, z.offset = true, cd.o
			z.name = zoneName(cd.o, host, hasHost && cd.o == hostOff)
			z.note = z.evidence(cd.previous)
			return z
		}
	}
	z.note = z.stale()
	return z
}

// zoneName names offset o for a config: "UTC" for no offset, the host's zone when it is at o,
// else the offset itself, "+08:00".
func zoneName(o time.Duration, host *time.Location, isHost bool) string {
	switch {
	case o == 0:
		return "UTC"
	case isHost && host.String() != "Local": // "Local" names another zone on another machine
		return host.String()
	}
	return OffsetText(o)
}

// ZoneName is the name discover gives the zone at offset o at time at: "UTC" for no offset, the
// host's zone (nil when unknown) when it is at o then, else the offset itself, "+08:00".
func ZoneName(o time.Duration, host *time.Location, at time.Time) string {
	isHost := false
	if host != nil {
		_, s := at.In(host).Zone()
		isHost = time.Duration(s)*time.Second == o
	}
	return zoneName(o, host, isHost)
}

// ZoneBounds are the offsets of the zones in use: from UTC-12:00 to UTC+14:00.
func ZoneBounds() (lo, hi time.Duration) { return minZoneOffset, maxZoneOffset }

// OffsetText writes an offset from UTC as a config's timezone takes it: "+08:00", "-05:30".
func OffsetText(o time.Duration) string {
	sign := "+"
	if o < 0 {
		sign, o = "-", -o
	}
	return fmt.Sprintf("%s%02d:%02d", sign, int(o/time.Hour), int(o%time.Hour/time.Minute))
}

// unit is "hour" or "day", as the evidence names a window.
func (z *zoneFit) unit() string {
	if z.class == clHour {
		return "hour"
	}
	return "day"
}

// evidence is the line the proposed zone rests on.
func (z *zoneFit) evidence(previous bool) string {
	clock := fmt.Sprintf("(server time %s UTC)", z.now.UTC().Format("15:04"))
	if z.class != clHour {
		lo, hi := z.span()
		return fmt.Sprintf("zone: newest day window %s is the current day at offsets from UTC%s to UTC%s %s: a day tells the zone only that far",
			z.label, OffsetText(lo), OffsetText(hi), clock)
	}
	if previous {
		return fmt.Sprintf("zone: newest hour window %s is the previous hour at UTC%s, %s after the boundary %s: the current hour has no key yet",
			z.label, OffsetText(z.offset), short(z.now.UTC().Add(z.offset).Sub(z.newest.Add(z.length))), clock)
	}
	return fmt.Sprintf("zone: newest hour window %s is the current hour at UTC%s %s", z.label, OffsetText(z.offset), clock)
}

// span is the lowest and highest quarter-hour offsets (within the zones in use) the newest window
// is the current one at.
func (z *zoneFit) span() (lo, hi time.Duration) {
	lo, hi = maxZoneOffset+1, minZoneOffset-1
	for o := minZoneOffset; o <= maxZoneOffset; o += zoneStep {
		if cur, _ := z.fits(o); cur {
			lo, hi = min(lo, o), max(hi, o)
		}
	}
	return lo, hi
}

// stale is the evidence line of a group whose newest window is the current one in no zone: it is
// not being written (or is written ahead of time), and no zone is proposed from it.
func (z *zoneFit) stale() string {
	clock := fmt.Sprintf("(server time %s UTC)", z.now.UTC().Format("2006-01-02 15:04"))
	if z.newest.After(z.now.UTC().Add(maxZoneOffset)) {
		return fmt.Sprintf("zone: not known: newest %s window %s lies ahead of the current %s in every zone from UTC-12:00 to UTC+14:00 %s: windows written ahead of time",
			z.unit(), z.label, z.unit(), clock)
	}
	return fmt.Sprintf("zone: not known: newest %s window %s is older than the current %s in every zone from UTC-12:00 to UTC+14:00 %s: these keys are no longer written",
		z.unit(), z.label, z.unit(), clock)
}

// location is the zone proposed, as a fixed offset, for reading the group's windows; loc when
// none is.
func (z *zoneFit) location(loc *time.Location) *time.Location {
	if !z.ok {
		return loc
	}
	return time.FixedZone(z.name, int(z.offset/time.Second))
}

// zoneOf reads the zone of a windowed group from its newest window and the server's clock at its
// latest sample. g.mu is held.
func (g *Groups) zoneOf(sh *shape, l layout) zoneFit {
	if l.window < 0 {
		return zoneFit{}
	}
	return inferZone(sh.skel.classes[l.window], sh.slots[l.window].max, sh.ev.lastNow, g.opt.Host)
}

// shifted returns sh with its keys' expiry past their windows' ends as the windows cut in the zone
// proposed end, rather than in loc, which the samples' windows were read in; sh itself when no
// zone is proposed or the two agree. A key's window ends later, by its zone's offset less loc's,
// in a zone behind loc's.
func (z *zoneFit) shifted(sh *shape, loc *time.Location) *shape {
	if !z.ok {
		return sh
	}
	_, s := z.now.In(loc).Zone()
	shift := z.offset - time.Duration(s)*time.Second
	if shift == 0 || sh.ev.retN == 0 {
		return sh
	}
	c := *sh
	c.ev.retMin += shift
	c.ev.retMax += shift
	return &c
}

// TopZone is the top-level timezone of a whole file: the zone most groups' windows show (of the
// groups with hour windows, else of those with day windows; a tie goes to UTC, then to the name
// first in order), and how many groups show it; "UTC" and 0 when none shows one.
func (d *Doc) TopZone() (string, int) {
	for _, hours := range []bool{true, false} {
		votes := map[string]int{}
		for _, g := range d.Result.Groups {
			if g.zone.ok && g.Entry != nil && (g.zone.class == clHour) == hours {
				votes[g.zone.name]++
			}
		}
		best, n := "", 0
		for name, v := range votes {
			if v > n || v == n && (name == "UTC" || best != "UTC" && name < best) {
				best, n = name, v
			}
		}
		if n > 0 {
			return best, n
		}
	}
	return "UTC", 0
}

// topZone sets the zone the document's entries are cut in unless they set their own: the file's
// under Merge, else TopZone, with its offset when a group proposed it.
func (d *Doc) topZone() {
	d.top, d.topFits = d.Timezone, nil
	if d.Merge != "" {
		return
	}
	d.top, _ = d.TopZone()
	for _, g := range d.Result.Groups {
		if g.zone.ok && g.zone.name == d.top {
			off := g.zone.offset
			d.topFits = func(z *zoneFit) bool {
				cur, prev := z.fits(off)
				return cur || prev
			}
			return
		}
	}
}

// entryOf is g's entry as the document prints it: without its timezone when the top-level one
// already cuts its windows where its data shows they are (the same zone, or for day windows one
// that fits them too).
func (d *Doc) entryOf(g Group) *Entry {
	en := g.Entry
	if en.Timezone == "" || en.Timezone != d.top && (d.topFits == nil || !g.zone.ok || !d.topFits(&g.zone)) {
		return en
	}
	c := *en
	c.Timezone = ""
	return &c
}
