package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
)

// overview is one panel per area with its headline numbers.
type overview struct{ c *console }

func newOverview(c *console) *overview { return &overview{c: c} }

// The overview has no rows to select and no keys of its own.
func (o *overview) bindings() []binding { return nil }
func (o *overview) sync()               {}
func (o *overview) setFilter(string)    {}
func (o *overview) filterable() bool    { return false }
func (o *overview) family() string      { return "" }
func (o *overview) back() bool          { return false }
func (o *overview) crumbs() []string    { return nil }
func (o *overview) filterText() string  { return "" }
func (o *overview) refresh() tea.Cmd    { return nil }

func (o *overview) render(w, h int) string {
	st := o.c.styles
	snap := o.c.snapshot()
	if snap == nil {
		return o.waiting()
	}
	panels := []struct {
		title string
		lines []string
	}{
		{"Counters", o.counters(snap)},
		{"TTL health", o.health(snap)},
		{"Queues", o.queues(snap)},
		{"Limiters", append(o.limiters(snap), o.blooms(snap)...)},
	}
	cols := 1
	if w >= 72 {
		cols = 2
	}
	pw := w/cols - 2 // the border's two cells
	var boxes []string
	for _, p := range panels {
		body := append([]string{st.PanelTitle.Render(p.title)}, p.lines...)
		for i, l := range body {
			body[i] = fit(l, pw-2) // padding
		}
		boxes = append(boxes, st.Panel.Width(pw+2).Render(strings.Join(body, "\n")))
	}
	var rows []string
	for i := 0; i < len(boxes); i += cols {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, boxes[i:min(i+cols, len(boxes))]...))
	}
	sweep := fmt.Sprintf("last sweep: %s, %s in families, %s ms; the next has seen %s",
		format.Count(snap.Scan.KeysSeen, "key", "keys"), format.Commas(snap.Scan.KeysMatched), format.Commas(snap.Scan.DurationMS),
		format.Count(o.c.status.Sweep.KeysSeen, "key", "keys"))
	if !snap.Scan.Complete {
		sweep = firstSweepText(snap.Scan)
	}
	if ms := snap.Scan.Masters; len(ms) > 1 {
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = m.Addr + " " + format.Commas(m.KeysSeen)
			if !snap.Scan.Complete {
				parts[i] += fmt.Sprintf(" (%s)", coverageText(m.Coverage))
			}
		}
		sweep += "\nkeys by master: " + strings.Join(parts, " · ")
	}
	tail := strings.Split(st.Muted.Render(sweep), "\n")
	for _, warning := range snap.Warnings { // the config against this keyspace, e.g. a key two entries claim
		tail = append(tail, st.Warn.Render(fit("warning: "+warning, w)))
	}
	// The Server panel and the unclaimed keys' largest groups give way to the sweep line and
	// warnings on a short screen; the unclaimed keys keep their first line, and their groups
	// come before the Server panel unless it warns of eviction.
	grid := strings.Join(rows, "\n")
	rest := h - lipgloss.Height(grid) - len(tail)
	serverH := rest - 1
	if o.c.status.Server.Eviction == nil {
		serverH -= min(3, len(snap.Unclaimed.Groups))
	}
	server := o.server(w, serverH)
	unclaimed := o.unclaimed(snap.Unclaimed, w, rest-len(server))
	return strings.Join(slices.Concat([]string{grid}, server, unclaimed, tail), "\n")
}

// server is the Server panel, at most h lines high; the embedded Redis keeps no figures of a
// server's.
func (o *overview) server(w, h int) []string {
	if h < 1 {
		return nil
	}
	if o.c.opt.Demo {
		st := o.c.styles
		return []string{fit(st.PanelTitle.Render("Server")+"  "+st.Muted.Render("the embedded Redis keeps no server figures of its own"), w)}
	}
	return newHealth(o.c).panel(w, h)
}

// unclaimed says how many keys no entry claims, what they weigh and their largest groups, so
// they are never silent; the Unclaimed view lists every group.
func (o *overview) unclaimed(r discover.Result, w, h int) []string {
	st := o.c.styles
	title := st.PanelTitle.Render("Unclaimed keys") + " "
	if r.Keys == 0 {
		return []string{fit(title+st.Good.Render("none: an entry of the config claims every key"), w)}
	}
	lines := []string{fit(title+st.Warn.Render(fmt.Sprintf("%s in %s, memory %s", format.Commas(r.Keys), format.Count(len(r.Groups), "group", "groups"),
		memoryText(r)))+st.Muted.Render(fmt.Sprintf("  (%d lists them)", len(viewNames))), w)}
	top := r.Groups[:max(min(3, len(r.Groups), h-1), 0)]
	pw := 0
	for _, g := range top {
		pw = max(pw, lipgloss.Width(discover.Printable(g.Pattern)))
	}
	pw = min(pw, max(w-34, 8))
	for _, g := range top {
		lines = append(lines, fit(fmt.Sprintf("  %s  %-15s %12s keys", fit(discover.Printable(g.Pattern), pw), g.Kind, format.Commas(g.Keys)), w))
	}
	return lines
}

// waiting is what shows before the first sweep ends.
func (o *overview) waiting() string {
	st := o.c.styles
	if n := o.c.status.Sweep.KeysSeen; n > 0 {
		return st.Muted.Render(fmt.Sprintf("First sweep under way: %s seen. The panels fill when it completes.", format.Count(n, "key", "keys")))
	}
	return st.Muted.Render("Connecting and starting the first sweep…")
}

func (o *overview) counters(snap *snapshot.Snapshot) []string {
	if len(snap.Counters) == 0 { // no family: no figure to add up, not figures of 0
		st := o.c.styles
		return []string{st.Muted.Render(o.noneYet()), st.Muted.Render("[[counter]]: events/s, this hour,"), st.Muted.Render("today")}
	}
	var keys int64
	var now float64
	var hour, today snapshot.Sum // the families' totals may be saturated: the sum says so
	var anyRate bool
	// est marks a sum that holds a live estimate; bound one that holds a live lower bound; kept
	// a sum some family is written in windows of (none: no figure, not one of 0).
	var est, bound, kept [3]bool
	for _, f := range snap.Counters {
		keys += f.Keys
		live := o.c.status.LiveFamily(f.Family)
		switch {
		case cells.LiveRate(f, live):
			now += math.Round(live.RatePerSec.Estimate)
			anyRate, est[0], bound[0] = true, est[0] || !live.RatePerSec.Exact(), bound[0] || live.Partial
		case f.RatePerSec != nil:
			now += math.Round(*f.RatePerSec)
			anyRate = true
		case f.HourAvgPerSec != nil:
			now += math.Round(*f.HourAvgPerSec)
		}
		for i, g := range []string{"hour", "day"} {
			sum := &hour
			if g == "day" {
				sum = &today
			}
			kept[i+1] = kept[i+1] || slices.Contains(f.Granularities, g)
			if cells.UseLive(f, g, live) {
				sum.Add(int64(math.Round(live.Total.Estimate)), false)
				est[i+1], bound[i+1] = est[i+1] || !live.Total.Exact(), bound[i+1] || live.Partial
			} else if w := f.CurrentWindow(g); w != nil {
				sum.Add(w.Total, w.Saturated)
			}
		}
	}
	label := "events/s now"
	if !anyRate {
		label = "events/s (hour avg)"
	}
	keysText := format.Commas(keys)
	if !snap.Scan.Complete { // a first sweep under way: every sum holds its estimates
		est = [3]bool{true, true, true}
		if soFar(snap) {
			bound = [3]bool{true, true, true}
		}
		keysText = partialMark(snap) + format.Short(float64(keys))
	}
	mark := func(i int, s string) string {
		switch {
		case i > 0 && !kept[i]:
			return format.NotKept
		case bound[i]:
			return "≥≈" + s
		case est[i]:
			return "≈" + s
		}
		return s
	}
	return []string{
		row(label, mark(0, wholeRate(now))),
		row("this hour", mark(1, sumText(hour))),
		row("today", mark(2, sumText(today))),
		o.c.styles.Muted.Render(fmt.Sprintf("%s · %s %s", format.Count(len(snap.Counters), "family", "families"), keysText, format.Plural(keys, "key", "keys"))),
	}
}

// firstSweepText says how far the first sweep has come while its estimates stand in for the
// figures: the share of the keyspace swept, the keys, and when it should end.
func firstSweepText(sc snapshot.ScanStats) string {
	text := fmt.Sprintf("first sweep under way: %s swept, %s of the keyspace", format.Count(sc.KeysSeen, "key", "keys"), coverageText(sc.Coverage))
	if sc.ETASeconds != nil {
		text += ", done in about " + format.Age(time.Duration(*sc.ETASeconds*float64(time.Second)))
	}
	text += "; figures marked ≈ are estimates (95% interval), ≥ what was seen so far"
	if sc.DBSizeNote != "" {
		text += "; nothing is scaled: " + sc.DBSizeNote
	}
	return text
}

// coverageText is a share swept, as a percentage.
func coverageText(c float64) string {
	if c <= 0 {
		return "an unknown share"
	}
	if c < 0.1 {
		return fmt.Sprintf("%.1f%%", 100*c)
	}
	return fmt.Sprintf("%.0f%%", 100*c)
}

// wholeRate is a whole number of events a second; Rate marks one past the int64 range.
func wholeRate(r float64) string {
	if r > -10 && r < 10 {
		return format.Commas(int64(r))
	}
	return format.Rate(r)
}

// sumText is a sum of totals as a figure: ≥ when it is a bound, ? when the totals bound it from
// no one side.
func sumText(s snapshot.Sum) string {
	n, saturated, known := s.Value()
	if !known {
		return format.Unknown
	}
	return format.Total(n, saturated)
}

func (o *overview) health(snap *snapshot.Snapshot) []string {
	st := o.c.styles
	if len(snap.Counters) == 0 && len(snap.Locks) == 0 { // nothing whose TTLs it checks
		return []string{st.Muted.Render(o.noneYet()), st.Muted.Render("[[counter]], [[lock]]: keys leaking"), st.Muted.Render("(no TTL), over retention")}
	}
	h := snap.TTLHealth
	mem := func(p snapshot.Problem) string {
		if p.Sampled == 0 {
			return ""
		}
		return " ~" + format.BytesIEC(p.Bytes)
	}
	warn := func(n int64, s string) string {
		if n > 0 {
			return st.Warn.Render(s)
		}
		return st.Good.Render(s)
	}
	return []string{
		warn(h.NoTTL.Keys, row("leaking (no TTL)", problemCell(h.NoTTL)+mem(h.NoTTL))),
		warn(h.OverRetention.Keys, row("over retention", problemCell(h.OverRetention)+mem(h.OverRetention))),
		warn(h.ExpiredButPresent.Keys, row("expired, present", problemCell(h.ExpiredButPresent))),
		warn(h.WrongType.Keys+h.NotInteger.Keys, row("wrong type / not int", problemCell(h.WrongType)+" / "+problemCell(h.NotInteger))),
	}
}

// row is a label and a right-aligned value in a panel; a value wider than its 16 cells (a
// saturated total's 26) takes the label's spare room rather than losing its digits.
func row(label, value string) string {
	if vw := lipgloss.Width(value); vw > 16 {
		return fit(label, max(35-vw, 0)) + " " + value
	}
	return fit(label, 20) + right(value, 16)
}

// noneYet is a panel's line when it has nothing to show: none configured, or with the entries
// inferred from the keys, none found among them.
func (o *overview) noneYet() string {
	if o.c.status.Inferred != nil {
		return "none found among the keys"
	}
	return "none configured yet"
}

func (o *overview) limiters(snap *snapshot.Snapshot) []string {
	st := o.c.styles
	waiting := 0 // limiters found among the keys but not counted: only their limit is guessed
	if o.c.status.Inferred != nil {
		waiting = len(snap.Unclaimed.Guessing())
	}
	if len(snap.Limiters) == 0 && waiting > 0 {
		return []string{st.Warn.Render(fmt.Sprintf("%d found, not counted: their keys", waiting)),
			st.Muted.Render("do not hold their limit (7 Unclaimed;"), st.Muted.Render("w writes them to set it)")}
	}
	if len(snap.Limiters) == 0 {
		return []string{st.Muted.Render(o.noneYet()), st.Muted.Render("[[limiter]]: keys at their limit,"), st.Muted.Render("rejected/s, top rejected keys")}
	}
	var keys, atLimit int64
	var over, refused snapshot.Sum
	var rejected float64
	var own, refusing, libraries int // limiters that keep their decisions; libraries that count refusals
	approx, unread := false, false   // a rate is an hour's average; an hour's counters were not read
	busiest, busiestN := "", int64(-1)
	for _, l := range snap.Limiters {
		keys, atLimit = keys+l.Keys, atLimit+l.AtLimit
		if l.KeepsDecisions() {
			own++
			over.Add(*l.OverLimit, false)
			r, estimated, known := rejectedPerSec(l, snap.TakenAt)
			rejected += r
			approx, unread = approx || estimated, unread || !known
		} else {
			libraries++
		}
		if l.RefusedInWindow != nil && !l.KeepsDecisions() {
			refusing++
			refused.Add(*l.RefusedInWindow, l.RefusedSaturated)
		}
		if len(l.Top) > 0 && l.Top[0].Count > busiestN {
			busiest, busiestN = l.Top[0].Key, l.Top[0].Count
		}
	}
	warn := func(s string, bad bool) string {
		if bad {
			return st.Warn.Render(s)
		}
		return s
	}
	// What no limiter keeps is "—"; a total over some of them says so in the line below.
	overText, rejectedText := format.NotKept, format.NotKept
	if own > 0 {
		overText, rejectedText = sumText(over), format.Rate(rejected)
		if approx {
			rejectedText = "~" + rejectedText
		}
		if unread {
			rejectedText += "+?"
		}
	}
	n, _, _ := over.Value()
	lines := []string{
		row("keys", o.c.countCell(keys)),
		warn(row("at their limit", o.c.countCell(atLimit)), atLimit > 0),
		warn(row("over (racy writer)", o.c.bound(overText)), n > 0),
		row("rejected/s", rejectedText),
	}
	if own > 0 && libraries > 0 {
		lines = append(lines, st.Muted.Render(fmt.Sprintf("  over, rejected/s: %d of %d keep them", own, own+libraries)))
	}
	if libraries > 0 {
		lines = append(lines, refusedRows(st, refused, refusing, libraries)...)
	}
	if busiest != "" {
		lines = append(lines, st.Muted.Render("busiest: "+busiest+" ("+format.Commas(busiestN)+")"))
	}
	if waiting > 0 {
		lines = append(lines, st.Warn.Render(fmt.Sprintf("%d more not counted: no limit in their keys", waiting)))
	}
	return lines
}

// refusedRows are the refused attempts the libraries' limiter keys count in their windows: "—"
// when none of them does, and by how many of them when only some do.
func refusedRows(st theme.Styles, refused snapshot.Sum, refusing, libraries int) []string {
	if refusing == 0 {
		return []string{row("refused in windows", format.NotKept)}
	}
	lines := []string{row("refused in windows", sumText(refused))}
	if refusing < libraries {
		lines = append(lines, st.Muted.Render(fmt.Sprintf("  refused: %d of %d libraries keep it", refusing, libraries)))
	}
	return lines
}

// rejectedPerSec is a limiter of hourglass's own's rejections a second: between two snapshots,
// or before a second one (estimated) this hour's average; known is false when this hour's
// counters were not read.
func rejectedPerSec(l snapshot.Limiter, taken time.Time) (r float64, estimated, known bool) {
	switch {
	case l.RejectedPerSec != nil:
		return *l.RejectedPerSec, false, true
	case l.Rejected == nil:
		return 0, false, false
	}
	return float64(*l.Rejected) / max(taken.Sub(taken.Truncate(time.Hour)).Seconds(), 1), true, true
}

// soFar reports whether a sweep under way scaled nothing (the keys the servers hold are
// unknown: DBSIZE refused), so its figures are what it has seen so far.
func soFar(snap *snapshot.Snapshot) bool {
	return snap.Scan.Coverage <= 0 || snap.Scan.DBSizeNote != ""
}

// partialMark is the mark of a sum of a sweep under way's figures: ≈ when they are estimates, ≥
// when they are only what was seen so far.
func partialMark(snap *snapshot.Snapshot) string {
	if soFar(snap) {
		return "≥"
	}
	return "≈"
}

// blooms is the Bloom filters' line: how many, and how many are past their target error rate; it
// never reads as fine while one is past it, or while one's rate or some keys were not read.
func (o *overview) blooms(snap *snapshot.Snapshot) []string {
	if len(snap.Blooms) == 0 {
		return nil
	}
	st := o.c.styles
	var n, over, unknown int
	var unread int64
	more := false
	for _, b := range snap.Blooms {
		n, more = n+len(b.Filters), more || b.More
		for _, u := range b.Unreadable {
			unread += u
		}
		for _, f := range b.Filters {
			switch {
			case f.OverTarget:
				over++
			case f.FalsePositive == nil || f.TargetRate == nil:
				unknown++
			}
		}
	}
	count := fmt.Sprint(n)
	switch {
	case n == 0:
		count = "none"
	case more: // only the first filters were read
		count += "+"
	}
	const label = "bloom filters"
	switch {
	case over > 0:
		return []string{st.Bad.Render(row(label, fmt.Sprintf("%s · %d over target", count, over)))}
	case unknown > 0:
		return []string{st.Warn.Render(row(label, fmt.Sprintf("%s · %d rate unknown", count, unknown)))}
	case unread > 0:
		return []string{st.Warn.Render(row(label, fmt.Sprintf("%s · %s unread", count, format.Count(unread, "key", "keys"))))}
	case n == 0:
		return []string{st.Muted.Render(row(label, "none found"))}
	}
	return []string{row(label, count+" · none over target")}
}
