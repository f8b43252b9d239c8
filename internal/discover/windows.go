package discover

import (
	"fmt"
	"time"
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
	gr.Entry = &Entry{Table: "limiter", Pattern: kl.text, LimiterKind: "fixed", Window: duration(window), Limit: max(1, e.intMax)}
	gr.Evidence = append(gr.Evidence, fmt.Sprintf("small integers (%s to %s); %s: a fixed-window limiter, one key per window, not a counter kept to be read; limit = the highest count seen: set your real limit", commas(e.intMin), commas(e.intMax), why))
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
