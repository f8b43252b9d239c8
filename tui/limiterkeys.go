package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// limKeysLevel is a limiter's busiest keys from the last sweep, each with its hits over the
// sweeps as a sparkline; enter reads one key.
type limKeysLevel struct {
	snapLevel[snapshot.Limiter, snapshot.KeyCount]
}

func newLimKeysLevel(c *console, d *drill, name string) *limKeysLevel {
	l := &limKeysLevel{snapLevel[snapshot.Limiter, snapshot.KeyCount]{c: c, d: d, name: name,
		rows: list[snapshot.KeyCount]{id: func(k snapshot.KeyCount) string { return k.Raw }},
		find: func(s *snapshot.Snapshot, name string) *snapshot.Limiter {
			return named(s.Limiters, name, func(l snapshot.Limiter) string { return l.Name })
		},
		keep: func(lim *snapshot.Limiter, filter string) []snapshot.KeyCount {
			return kept(lim.Top, func(k snapshot.KeyCount) bool { return matches(filter, k.Key) })
		},
	}}
	l.sync()
	return l
}

func (l *limKeysLevel) bindings() []binding {
	return append(moveBindings(l.c.keys, &l.rows, nil), binding{Binding: withHelp(l.c.keys.Enter, "read key"), short: true, do: func() tea.Cmd {
		if k, ok := l.rows.selected(); ok {
			return l.d.push(newLimKeyLevel(l.c, l.name, k))
		}
		return nil
	}})
}

// limHistory names a limiter key's hits in the history of the sweeps.
func limHistory(limiter, raw string) string { return limHistoryPrefix + limiter + "\x00" + raw }

const limHistoryPrefix = "limkey."

func (l *limKeysLevel) render(w, h int) string {
	st := l.c.styles
	lim, keys := l.entry, l.rows.rows
	if lim == nil {
		return st.Muted.Render("the last sweep has no limiter " + l.name)
	}
	head := fmt.Sprintf("%s  %s, %s %s in the window, %s", st.Title.Render(lim.Name), format.Count(lim.Keys, "key", "keys"),
		format.Total(lim.Hits, lim.HitsSaturated), format.Plural(lim.Hits, "hit", "hits"), limitPhrase(limitText(lim.Limit), millisOrKey(lim.WindowMS)))
	decisions := fmt.Sprintf("this hour: %s allowed, %s rejected", format.CommasOf(lim.Allowed, format.Unknown), format.CommasOf(lim.Rejected, format.Unknown))
	if !lim.KeepsDecisions() {
		decisions = fmt.Sprintf("allowed and rejected: %s (%s keeps no count of its decisions); refused in the keys' windows: %s",
			format.NotKept, lim.Layout, cells.Refused(*lim))
	}
	lines := []string{fit(head, w), st.Muted.Render(fit(decisions, w)), ""}
	t := &table{styles: l.c, cols: []column{
		{title: "KEY", flex: true}, {title: "HITS", right: true}, {title: "OF LIMIT", right: true},
		{title: "REFUSED", right: true}, {title: ttlTitle(*lim), right: true}, {title: "HITS OVER SWEEPS", optional: true},
	}}
	t.selected = l.rows.sel
	for _, k := range keys {
		limit := limitOf(*lim)
		if k.Limit != nil {
			limit = *k.Limit
		}
		refused := format.CommasOf(k.Refused, format.NotKept)
		t.rows = append(t.rows, []string{k.Key, format.Commas(k.Count), fmt.Sprintf("%.0f%%", 100*float64(k.Count)/float64(max(limit, 1))),
			refused, ttlCell(*lim, k), l.c.spark(limHistory(lim.Name, k.Raw), 24)})
	}
	if len(keys) == 0 {
		return strings.Join(append(lines, st.Muted.Render("no keys in the last sweep")), "\n")
	}
	tl := t.render(w)
	from, to := l.rows.window(max(h-len(lines)-1, 1))
	lines = append(lines, tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(lines, "\n")
}

// limKeyLevel is one limiter key read now: its hits over the window as a sparkline (from a
// sliding log's entries), its limit, what remains, and the redis-cli command that reads it.
type limKeyLevel struct {
	oneKey[snapshot.LimiterKeyDetail]
	limiter string
	kc      snapshot.KeyCount
}

func newLimKeyLevel(c *console, limiter string, kc snapshot.KeyCount) *limKeyLevel {
	read := func(ctx context.Context, in Inspector) (snapshot.LimiterKeyDetail, error) {
		return in.LimiterKey(ctx, limiter, kc.Raw)
	}
	one := oneKey[snapshot.LimiterKeyDetail]{c: c, name: kc.Key, read: read,
		command: func(d *snapshot.LimiterKeyDetail) string { return d.Command }}
	return &limKeyLevel{oneKey: one, limiter: limiter, kc: kc}
}

func (l *limKeyLevel) bindings() []binding {
	return []binding{{Binding: l.c.keys.Copy, short: true, do: l.toggleCommand}}
}

func (l *limKeyLevel) render(w, h int) string {
	st := l.c.styles
	lines := []string{st.Title.Render(l.limiter) + "  " + l.kc.Key}
	if s := l.status(l.c); s != "" {
		lines = append(lines, s)
	}
	if l.c.opt.Inspector == nil {
		return strings.Join(append(lines, st.Muted.Render(noInspector)), "\n")
	}
	d := l.d
	if d == nil {
		return strings.Join(lines, "\n")
	}
	// hourglass's own limiter keeps neither per key; a library's answers both.
	remaining, refused := format.NotKept, format.NotKept
	if d.Remaining != nil {
		remaining, refused = format.Commas(*d.Remaining), format.CommasOf(d.Refused, format.NotKept)
	}
	lines = append(lines, "",
		field("hits in the window", format.Commas(d.Hits)+" of "+format.Commas(d.Limit)),
		field("remaining", remaining),
		field("refused in the window", refused),
		field("TTL", format.Millis(d.TTLMS)))
	if d.Remaining != nil { // a library's: when it takes the next hit, which the TTL need not say
		lines = append(lines, field("next hit allowed", allowedIn(d.AtLimit, d.AllowedInMS)))
	}
	if len(d.Buckets) > 0 {
		spark := d.Buckets[max(len(d.Buckets)-max(w-30, 8), 0):]
		lines = append(lines, field("hits over the window", st.Spark.Render(format.Sparkline(spark))+
			st.Muted.Render(fmt.Sprintf("  %s a cell, peak %s", format.Millis(d.BucketMS), format.Peak(spark)))))
	} else if d.BucketsNote != "" {
		lines = append(lines, field("hits over the window", st.Muted.Render(d.BucketsNote)))
	}
	if l.showCmd {
		lines = append(append(lines, ""), wrapPlain(d.Command, w)...)
	}
	return strings.Join(lines, "\n")
}

// A library's limiter key at its limit takes the next hit when the library says so, which is not
// the key's TTL. Python limits' moving window allows again when the window's oldest hit leaves it.
// The key, like limits' own reset, lasts until the newest does. So the keys' table shows that time
// for a library's limiter (ALLOWED IN), and the TTL for hourglass's own.

// ttlTitle is the title of the keys' table's time column.
func ttlTitle(lim snapshot.Limiter) string {
	if lim.KeepsDecisions() {
		return "TTL"
	}
	return "ALLOWED IN"
}

// ttlCell is a key's time: its TTL for hourglass's own limiter; for a library's, when the next
// hit is allowed.
func ttlCell(lim snapshot.Limiter, k snapshot.KeyCount) string {
	if lim.KeepsDecisions() {
		return format.Millis(k.TTLMS)
	}
	return allowedIn(k.AtLimit, k.TTLMS)
}

// allowedIn says when a library's key takes the next hit: now below its limit, else in ms
// (unknown when the library's answer is not known).
func allowedIn(atLimit bool, ms int64) string {
	switch {
	case !atLimit:
		return "now"
	case ms < 0:
		return format.Unknown
	}
	return "in " + format.Millis(ms)
}
