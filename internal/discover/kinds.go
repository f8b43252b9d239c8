package discover

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// infer decides what a group is from its pattern and its samples' evidence. g.mu is held.
func (g *Groups) infer(sh *shape) Group {
	sh, datelike := g.timesOrNumbers(sh)
	l := patternOf(sh)
	if t, _ := sh.ev.mainType(); t != "string" && t != "" {
		l = keyLayout(sh) // only strings are windowed: a queue's or limiter's date is a dim
	}
	gr := Group{Pattern: l.text, Keys: sh.keys, Sampled: sh.ev.sampled, Bytes: estimate(sh),
		Examples: append([]string{}, sh.examples...), Kind: KindUndecided, Confidence: Low}
	e := &sh.ev
	gr.Evidence = append(gr.Evidence, typesText(e))
	gr.Evidence = append(gr.Evidence, l.dims...)
	gr.Evidence = append(gr.Evidence, datelike...)
	if e.present() == 0 {
		gr.Evidence = append(gr.Evidence, "no key of the group has been read yet")
		return gr
	}
	t, share := e.mainType()
	if share < 0.8 {
		gr.Evidence = append(gr.Evidence, "the sampled keys are of different types: not one structure")
		return gr
	}
	switch {
	case inferBloom(&gr, sh, t):
	case l.timeSeg >= 0 && t == "string":
		g.inferWindowed(&gr, sh, l)
	case t == "zset":
		inferScores(&gr, sh, l)
	case t == "list":
		listQueue(&gr, sh, l)
	case t == "string":
		inferString(&gr, sh, l)
	default:
		gr.Kind, gr.Confidence = KindOther, High
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("%s keys hold no structure hourglass reads (records, sets, streams)", t))
	}
	gr.Evidence = append(gr.Evidence, ttlText(e))
	if gr.Confidence == High && e.present() < 3 && int64(e.present()) < sh.keys {
		gr.Confidence = Medium // two keys read of more say little
	}
	if en := gr.Entry; en != nil && en.Pattern == "" && en.Key == "" {
		gr.Entry = nil
		gr.Evidence = append(gr.Evidence, "the key's name is empty: no entry can name it")
	}
	return gr
}

// inferWindowed decides a group of strings whose names hold a time token.
func (g *Groups) inferWindowed(gr *Group, sh *shape, l layout) {
	zone := g.zoneOf(sh, l)
	sh = zone.shifted(sh, g.opt.Location)
	e := &sh.ev
	n := float64(e.present())
	var kind Kind
	var table string
	switch {
	case mixedInts(e):
		undecidedMixed(gr, e)
		return
	case float64(e.tokens) >= 0.9*n && float64(e.withTTL) >= 0.9*n && e.ttlMax <= 24*time.Hour &&
		(e.ttlMax <= maxLockTTL || lockName(l.text)):
		kl := keyLayout(sh)
		gr.Evidence = append([]string{typesText(e)}, kl.dims...)
		inferLock(gr, sh, kl, "random tokens")
		return
	case float64(e.ints) >= 0.9*n && g.windowLimiter(gr, sh, l):
		return
	case float64(e.hll) >= 0.9*n:
		kind, table = KindUnique, "unique"
		gr.Evidence = append(gr.Evidence, "values are HyperLogLogs")
	case float64(e.ints) >= 0.9*n:
		kind, table = KindCounter, "counter"
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("values: integers in %d of %d sampled, up to %s", e.ints, e.present(), format.Commas(e.intMax)))
	case float64(e.binary) >= 0.9*n:
		kind, table = KindBitmap, "bitmap"
		gr.Evidence = append(gr.Evidence, "values are binary: bitmaps")
	default:
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("values: %d of %d sampled are not integers: a cache by time, not a counter", e.nonInts, e.present()))
		return
	}
	gr.Kind = kind
	st := sh.slots[l.timeSeg]
	c := sh.skel.classes[l.timeSeg]
	gr.Evidence = append(gr.Evidence, fmt.Sprintf("windows: %s, %s … %s (%s)", c.describe(), st.min, st.max, distinctText(st)))
	if l.window < 0 {
		gr.Confidence = Low
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("windows named in %s%s: hourglass's families read hour and day windows in date formats, so no entry can read these", c.describe(), alignText(st)))
		return
	}
	gr.Confidence = High
	if e.present() < 3 || (kind == KindCounter && e.ints < e.present()) {
		gr.Confidence = Medium
	}
	ret, note := g.retention(sh, l, zone.location(g.opt.Location))
	gr.Evidence = append(gr.Evidence, note)
	gr.Entry = &Entry{Table: table, Pattern: l.text}
	if zone.note != "" {
		gr.Evidence = append(gr.Evidence, zone.note)
	}
	if zone.ok {
		gr.Entry.Timezone, gr.zone = zone.name, zone
	}
	if c == clHour {
		gr.Entry.HourFormat, gr.Entry.HourRetention = c.format(), ret
	} else {
		gr.Entry.DayFormat, gr.Entry.DayRetention = c.format(), ret
	}
}

// retention reads a windowed group's retention from its keys' TTLs (their windows read in loc): the largest expiry past a
// window's end seen. With no TTL seen it is the age of the oldest window present, so that no key
// there reads as expired; the evidence says which.
func (g *Groups) retention(sh *shape, l layout, loc *time.Location) (string, string) {
	e := &sh.ev
	c := sh.skel.classes[l.window]
	unit := time.Hour
	if c != clHour {
		unit = 24 * time.Hour
	}
	if e.retN > 0 {
		// A minute of slack: the TTL is read a moment after the clock, and writers that expire
		// from their first write land a little past the window-aligned instant.
		r := retentionOf(e.retMax-time.Minute, unit)
		note := fmt.Sprintf("retention: keys expire %s … %s after their window ends, on %d of %d sampled", short(e.retMin), short(e.retMax), e.retN, e.present())
		if e.noTTL > 0 {
			note += fmt.Sprintf("; %d have no TTL and never expire", e.noTTL)
		}
		return duration(r), note
	}
	start, length, ok := windowOf(c, sh.slots[l.window].min, loc)
	age := unit
	if ok && !e.lastNow.IsZero() {
		age = max(unit, roundUp(e.lastNow.Sub(start.Add(length)), unit))
	}
	return duration(age), fmt.Sprintf("no TTL on any of %d sampled keys: they never expire; retention set to the oldest window's age (%s) so nothing present reads as expired", e.present(), duration(age))
}

// keyOrPattern sets a queue entry's key when the group is one key, its pattern otherwise.
func keyOrPattern(en *Entry, l layout, sh *shape) {
	for _, v := range l.varies {
		if v {
			en.Pattern = l.text
			return
		}
	}
	en.Key = l.text
}

// inferLibrary describes a library's keys.
func inferLibrary(sh *shape) Group {
	lib := sh.lib
	gr := Group{Pattern: lib.Name + " keys", Keys: sh.keys, Sampled: sh.ev.sampled, Bytes: estimate(sh),
		Examples: append([]string{}, sh.examples...), Confidence: High}
	gr.Evidence = append(gr.Evidence, typesText(&sh.ev))
	if lib.Job != "" {
		gr.Kind = KindJobQueue
		gr.Pattern = libraryPattern(lib)
		gr.Entry = &Entry{Table: "job_queue", Name: lib.Name, Layout: lib.Name}
		if p := lib.source.Prefix; p != lib.Job.DefaultPrefix() {
			gr.Entry.Name, gr.Entry.Prefix = lib.Name+"_"+nameWords(p), p
		}
		switch {
		case lib.cand != nil:
			gr.Evidence = append(gr.Evidence, lib.cand.proof.Evidence())
			if !lib.cand.proof.Trusted() {
				gr.Confidence = Low
			}
		case sh.registry:
			gr.Evidence = append(gr.Evidence, "names as "+lib.Name+" writes them, "+lib.Job.RegistryText()+" among them")
		default:
			gr.Confidence = Medium
			gr.Evidence = append(gr.Evidence, "names as "+lib.Name+" writes them; its queue registry was not seen")
		}
		return gr
	}
	gr.Kind = KindLimiterLibrary
	gr.Pattern = lib.Limiter.DefaultPattern()
	gr.Entry = &Entry{Table: "limiter", Name: lib.Name, Layout: lib.Name}
	gr.Evidence = append(gr.Evidence, "names under "+lib.Name+"'s default prefix "+lib.prefix)
	if lib.Limiter != limits.Limits {
		gr.Confidence = Medium
		gr.Entry.Window = duration(niceWindow(sh.ev.ttlMax))
		gr.Entry.Limit = max(1, sh.ev.intMax)
		gr.Entry.Guessed = []string{"window", "limit"}
		if note := redisRateNote(lib); note != "" {
			gr.Evidence = append(gr.Evidence, fmt.Sprintf("%s; window proposed from the longest TTL (%s), limit 1", note, short(sh.ev.ttlMax)))
		} else {
			gr.Evidence = append(gr.Evidence, fmt.Sprintf("window from the longest TTL (%s) and limit from the highest count seen (%s): the keys do not hold them, set yours", short(sh.ev.ttlMax), format.Commas(sh.ev.intMax)))
		}
	}
	return gr
}

// labelled prefixes evidence lines with the windows they are about, once both an hour and a day
// group are in one entry.
func labelled(ev []string, en *Entry) []string {
	label := "day windows: "
	if en.HourFormat != "" && en.DayFormat == "" {
		label = "hour windows: "
	}
	out := make([]string, 0, len(ev))
	for _, line := range ev {
		if !strings.HasPrefix(line, "hour windows: ") && !strings.HasPrefix(line, "day windows: ") {
			line = label + line
		}
		out = append(out, line)
	}
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func rank(c Confidence) int { return map[Confidence]int{Low: 0, Medium: 1, High: 2}[c] }

// nameEntries gives each entry a unique name from its pattern's first literal words.
func nameEntries(groups []Group) {
	used := map[string]bool{}
	for i := range groups {
		en := groups[i].Entry
		if en == nil {
			continue
		}
		base := en.Name
		if base == "" {
			base = entryName(groups[i].Pattern)
		}
		name := base
		for n := 2; used[name]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		used[name] = true
		en.Name = name
	}
}

// entryName is the first two literal words of a pattern joined by "_", or "keys".
func entryName(pattern string) string {
	var words []string
	for _, f := range strings.FieldsFunc(pattern, func(r rune) bool { return r < 128 && isSep(byte(r)) }) {
		if strings.ContainsAny(f, "<>") || f == "" {
			continue
		}
		if w := placeholderSafe(strings.ToLower(f)); w != "" {
			words = append(words, w)
		}
		if len(words) == 2 {
			break
		}
	}
	if len(words) == 0 { // a pattern of placeholders alone, such as "{<channel>:<ad>}:<window>"
		for _, f := range strings.FieldsFunc(pattern, func(r rune) bool { return r == '<' || r == '>' }) {
			if w := placeholderSafe(f); w != "" && w != "window" && len(words) < 2 && !strings.ContainsAny(f, ":{}") {
				words = append(words, w)
			}
		}
	}
	if len(words) == 0 {
		return "keys"
	}
	return strings.Join(words, "_")
}

// taskName reports whether a pattern reads like a queue's.
func taskName(p string) bool {
	p = strings.ToLower(p)
	for _, w := range []string{"queue", "job", "task", "delay", "mq", "inbox", "outbox"} {
		if strings.Contains(p, w) {
			return true
		}
	}
	return false
}

// typesText says what was sampled.
func typesText(e *evidence) string {
	if e.sampled == 0 {
		return "sampled: none yet"
	}
	var parts []string
	for t, n := range e.types {
		parts = append(parts, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(parts)
	s := fmt.Sprintf("sampled %d: %s", e.sampled, strings.Join(parts, ", "))
	if e.gone > 0 {
		s += fmt.Sprintf(" (%d gone before they were read)", e.gone)
	}
	return s
}

// ttlText says what TTLs the samples had.
func ttlText(e *evidence) string {
	switch {
	case e.present() == 0:
		return ""
	case e.withTTL == 0:
		return fmt.Sprintf("TTL: none on %d sampled keys", e.present())
	case e.noTTL == 0:
		return fmt.Sprintf("TTL: %s … %s on all %d sampled", short(e.ttlMin), short(e.ttlMax), e.withTTL)
	}
	return fmt.Sprintf("TTL: %s … %s on %d sampled; none on %d", short(e.ttlMin), short(e.ttlMax), e.withTTL, e.noTTL)
}

func unitName(u store.ScoreUnit) string {
	return map[store.ScoreUnit]string{store.Seconds: "Unix seconds", store.Milliseconds: "Unix milliseconds",
		store.Microseconds: "Unix microseconds", store.BullMQScore: "BullMQ's ms×4096"}[u]
}

// roundUp rounds d up to a multiple of unit (at least one unit).
func roundUp(d, unit time.Duration) time.Duration {
	if d <= unit {
		return unit
	}
	return (d + unit - 1) / unit * unit
}

// niceWindow rounds a TTL up to the window it most likely is: the next of the windows limiters
// are commonly given (1s, 5s, 10s, 15s, 30s, 1m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d),
// else whole days.
func niceWindow(ttl time.Duration) time.Duration {
	for _, w := range niceWindows {
		if ttl <= w {
			return w
		}
	}
	return roundUp(ttl, 24*time.Hour)
}

var niceWindows = []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

// duration spells d as the config reads it: whole days as "30d", else Go's form without zero
// units ("48h", "90s", "1h30m").
func duration(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	s := d.String()
	s = strings.Replace(s, "m0s", "m", 1)
	s = strings.Replace(s, "h0m", "h", 1)
	return s
}

// short spells a duration for the evidence: to the second under two days, in days and hours
// from there ("30d", "88d12h").
func short(d time.Duration) string {
	if d < 0 {
		return "-" + short(-d)
	}
	if day := 24 * time.Hour; d >= 2*day {
		d = d.Round(time.Hour)
		if d%day == 0 {
			return duration(d)
		}
		return fmt.Sprintf("%dd%dh", d/day, d%day/time.Hour)
	}
	return duration(d.Round(time.Second))
}
