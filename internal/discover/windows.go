package discover

import (
	"fmt"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// windowLimiter reads integer strings whose names hold a time as a fixed-window limiter when
// their keys die with their window: a counter is kept past its window's end so that it can be
// read, a limiter's count is dropped when its window ends. That is keys in date windows that
// expire as their window ends, or keys named by a minute or a Unix time that live an hour or
// less. It reports whether it decided.
func (g *Groups) windowLimiter(gr *Group, sh *shape, l layout) bool {
	e := &sh.ev
	n := e.present()
	if e.noTTL > 0 || e.withTTL == 0 || e.intMin > maxHitCount {
		return false
	}
	st := sh.slots[l.timeSeg]
	c := sh.skel.classes[l.timeSeg]
	var window time.Duration
	var why string
	switch {
	case l.window >= 0 && e.retN*10 >= n*9 && e.retMax <= time.Minute:
		_, window, _ = windowOf(c, st.min, g.opt.Location)
		why = fmt.Sprintf("keys expire as their %s window ends (%s after it at most)", c.describe(), short(max(e.retMax, 0)))
	case l.window < 0 && e.ttlMax <= time.Hour:
		window = niceWindow(e.ttlMax)
		switch {
		case c == clMinute:
			window = time.Minute
		case (c == clUnixS || c == clUnixMS) && st.align >= 60:
			window = time.Duration(st.align) * time.Second
		}
		why = fmt.Sprintf("keys named by %s%s live %s at most", c.describe(), alignText(st), short(e.ttlMax))
	default:
		return false
	}
	kl := keyLayout(sh)
	gr.Pattern = kl.text
	gr.Evidence = append([]string{typesText(e)}, kl.dims...)
	gr.Kind, gr.Confidence = KindFixedLimiter, Medium
	gr.Entry = &Entry{Table: "limiter", Pattern: kl.text, LimiterKind: "fixed", Window: duration(window), Limit: max(1, e.intMax), Guessed: []string{"limit"}}
	gr.Evidence = append(gr.Evidence, fmt.Sprintf("small integers (%s to %s); %s: a fixed-window limiter, one key per window, not a counter kept to be read; limit = the highest count seen: set your real limit", format.Commas(e.intMin), format.Commas(e.intMax), why))
	return true
}

// alignText says which windows a segment of Unix times names, by the values seen: ", all on
// whole hours (hour windows)".
func alignText(st slotStat) string {
	switch st.align {
	case 86400:
		return ", all at midnight UTC (day windows)"
	case 3600:
		return ", all on whole hours (hour windows)"
	case 60:
		return ", all on whole minutes (minute windows)"
	case 1:
		return ", not on whole minutes (times, not windows)"
	}
	return ""
}

// retentionOf rounds a retention read from TTLs up to whole units (hours for hour windows); for
// day windows to whole hours, or whole days when that adds less than a tenth.
func retentionOf(d, unit time.Duration) time.Duration {
	if unit == time.Hour {
		return roundUp(d, time.Hour)
	}
	h := roundUp(d, time.Hour)
	if days := roundUp(h, 24*time.Hour); (days-h)*10 <= h {
		return days
	}
	return h
}

// mergeWindows folds an hour group and a day group of one family into one entry. Their patterns
// may differ where one has a placeholder and the other the one value it saw (hour keys of the
// last hours for the one shop open at night, day keys for five): the entry takes the placeholder.
func mergeWindows(groups []Group) []Group {
	out := groups[:0]
	for _, gr := range groups {
		en := gr.Entry
		if en == nil || en.Pattern == "" || en.HourFormat == "" && en.DayFormat == "" {
			out = append(out, gr)
			continue
		}
		i := windowPartner(out, en)
		if i < 0 {
			out = append(out, gr)
			continue
		}
		m := &out[i]
		m.Evidence = append(labelled(m.Evidence, m.Entry), labelled(gr.Evidence, en)...)
		if en.Pattern != m.Entry.Pattern && covers(en.Pattern, m.Entry.Pattern) {
			m.Pattern, m.Entry.Pattern = gr.Pattern, en.Pattern
		}
		if en.HourFormat != "" && gr.zone.ok || !m.zone.ok { // an hour tells the zone better than a day
			m.zone, m.Entry.Timezone = gr.zone, en.Timezone
		}
		if en.HourFormat != "" {
			m.Entry.HourFormat, m.Entry.HourRetention = en.HourFormat, en.HourRetention
		} else {
			m.Entry.DayFormat, m.Entry.DayRetention = en.DayFormat, en.DayRetention
		}
		m.Keys += gr.Keys
		m.members = append(append([]*shape(nil), m.members...), gr.members...)
		m.Sampled += gr.Sampled
		if gr.Bytes != nil || m.Bytes != nil {
			b := deref(m.Bytes) + deref(gr.Bytes)
			m.Bytes = &b
		}
		m.Examples = append(m.Examples, gr.Examples...)[:min(len(m.Examples)+len(gr.Examples), maxExamples)]
		if rank(gr.Confidence) < rank(m.Confidence) {
			m.Confidence = gr.Confidence
		}
	}
	return out
}

// windowPartner returns the group of out whose entry en completes: of the same table, with only
// the windows en lacks, and a pattern equal to en's, else one covering it or covered by it; -1
// when there is none.
func windowPartner(out []Group, en *Entry) int {
	near := -1
	for i := range out {
		o := out[i].Entry
		if o == nil || o.Table != en.Table || o.Pattern == "" {
			continue
		}
		hourOnly := o.HourFormat != "" && o.DayFormat == "" && en.DayFormat != "" && en.HourFormat == ""
		dayOnly := o.DayFormat != "" && o.HourFormat == "" && en.HourFormat != "" && en.DayFormat == ""
		switch {
		case !hourOnly && !dayOnly:
		case o.Pattern == en.Pattern:
			return i
		case near < 0 && (covers(o.Pattern, en.Pattern) || covers(en.Pattern, o.Pattern)):
			near = i
		}
	}
	return near
}

// covers reports whether pattern general reads every key of pattern specific: the same segments
// and separators, where they differ a placeholder in general and a literal in specific.
func covers(general, specific string) bool {
	g, s := patternSegs(general), patternSegs(specific)
	if g == nil || s == nil || len(g) != len(s) {
		return false
	}
	for i := range g {
		if g[i] == s[i] {
			continue
		}
		if !strings.HasPrefix(g[i], "<") || g[i] == "<window>" || strings.HasPrefix(s[i], "<") || len(s[i]) == 1 && isSep(s[i][0]) {
			return false
		}
	}
	return true
}

// patternSegs splits a pattern into its placeholders, separators and the literal runs between.
func patternSegs(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '<':
			j := strings.IndexByte(p[i:], '>')
			if j < 0 {
				return nil
			}
			if i > start {
				out = append(out, p[start:i])
			}
			out = append(out, p[i:i+j+1])
			i += j
			start = i + 1
		case isSep(p[i]):
			if i > start {
				out = append(out, p[start:i])
			}
			out = append(out, p[i:i+1])
			start = i + 1
		}
	}
	if start < len(p) {
		out = append(out, p[start:])
	}
	return out
}

// timesOrNumbers returns sh as it is, or, when a segment of time tokens holds times no window
// could be (ahead of the server clock by more than a day, or over twenty years old: ids such as
// 20351231 that read as dates), a copy whose segment is numbers, with the evidence why.
func (g *Groups) timesOrNumbers(sh *shape) (*shape, []string) {
	now := sh.ev.lastNow
	if now.IsZero() {
		return sh, nil
	}
	var classes []class
	var why []string
	for i, c := range sh.skel.classes {
		if !c.timeClass() {
			continue
		}
		st := sh.slots[i]
		first, _, ok1 := windowOf(c, st.min, g.opt.Location)
		last, _, ok2 := windowOf(c, st.max, g.opt.Location)
		if !ok1 || !ok2 || last.Before(now.Add(25*time.Hour)) && first.After(now.AddDate(-20, 0, 0)) {
			continue
		}
		if classes == nil {
			classes = append([]class(nil), sh.skel.classes...)
		}
		classes[i] = clNum
		why = append(why, fmt.Sprintf("%s … %s read as %s, but no window lies that far from now: numbers, not times", st.min, st.max, c.describe()))
	}
	if classes == nil {
		return sh, nil
	}
	sk := *sh.skel
	sk.classes = classes
	c := *sh
	c.skel = &sk
	return &c, why
}
