package tui

import (
	"fmt"
	"math"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// tally is a total over the queues that keep a figure: of counts the queues it is asked of,
// kept those that keep it, unknown those that keep it but could not be read. A total of queues
// none of which keeps the figure is "—", never 0.
type tally struct {
	sum               snapshot.Sum
	of, kept, unknown int
}

// add counts one queue's figure: nil when the queue keeps no such figure.
func (t *tally) add(n *int64) {
	t.of++
	if n != nil {
		t.kept++
		t.sum.Add(*n, *n == math.MaxInt64 || *n == math.MinInt64) // a library's hostile count: a bound
	}
}

// unread counts a queue that keeps the figure but could not be read.
func (t *tally) unread() { t.of, t.unknown = t.of+1, t.unknown+1 }

// text is the total: "—" when no queue keeps it, "?" when none could be read, "+?" after it when
// some could not.
func (t *tally) text() string {
	switch {
	case t.kept == 0 && t.unknown == 0:
		return format.NotKept
	case t.kept == 0:
		return format.Unknown
	case t.unknown > 0:
		return sumText(t.sum) + "+?"
	}
	return sumText(t.sum)
}

// note says, for a total over only some of the queues, how many keep it.
func (t *tally) note(label string) (string, bool) {
	notKept := t.of - t.kept - t.unknown
	if t.kept == 0 || notKept == 0 {
		return "", false
	}
	return fmt.Sprintf("  %s: %d of %d queues keep it", label, t.kept, t.of), true
}

// queueTallies are the Queues panel's totals.
type queueTallies struct {
	depth, due, inFlight, waiting, active tally
	lag                                   *int64 // the longest known wait, nil when none is known
	lagName                               string
	waitUnknown                           int // queues whose oldest waiting task carries no time
	run, failed                           rateTally
	jobs                                  bool // some job library is configured
}

// rateTally is a sum of rates a second over the job libraries' counts of the jobs they ran:
// kept those measured, measuring those a watcher is still measuring, unknown those kept but
// unknown otherwise. "—" when no library keeps one.
type rateTally struct {
	sum                      float64
	kept, measuring, unknown int
	slowest                  *snapshot.Measuring // of those measuring, the one with most to go
	why                      string              // the first count that could not be read, and why
}

// unread counts a count the library keeps whose read failed.
func (r *rateTally) unread(why string) {
	r.unknown++
	if r.why == "" {
		r.why = why
	}
}

// add counts one count's rate: none when the library keeps no such count (total nil); m says
// how far a rate being measured has come.
func (r *rateTally) add(total *int64, rate *float64, m *snapshot.Measuring) {
	switch {
	case total == nil:
	case rate != nil:
		r.kept, r.sum = r.kept+1, r.sum+*rate
	case m != nil:
		r.measuring++
		if r.slowest == nil || m.NeedSec-m.SpanSec > r.slowest.NeedSec-r.slowest.SpanSec {
			r.slowest = m
		}
	default:
		r.unknown++
	}
}

// text is the sum: "measuring" while every rate is, "?" when some could not be known and none
// is; a sum that leaves out rates still measuring is a lower bound (≥), one that leaves out
// unknown ones ends in "+?".
func (r *rateTally) text() string {
	switch {
	case r.kept == 0 && r.unknown == 0 && r.measuring == 0:
		return format.NotKept
	case r.kept == 0 && r.unknown == 0:
		return format.Pending
	case r.kept == 0:
		return format.Unknown
	}
	s := format.Rate(r.sum)
	if r.measuring > 0 {
		s = "≥" + s
	}
	if r.unknown > 0 {
		s += "+?"
	}
	return s
}

// addWait counts a queue's latency into the longest wait: its oldest waiting task's wait, or,
// when that is unknown (why), a queue the longest wait may leave out.
func (q *queueTallies) addWait(ms *int64, why, name string) {
	if ms == nil && why != "" {
		q.waitUnknown++
	}
	q.addLag(ms, name)
}

func (q *queueTallies) addLag(ms *int64, name string) {
	if ms != nil && (q.lag == nil || *ms > *q.lag) {
		q.lag, q.lagName = ms, name
	}
}

func (o *overview) queues(snap *snapshot.Snapshot) []string {
	st := o.c.styles
	if len(snap.DelayQueues)+len(snap.ListQueues)+len(snap.JobQueues) == 0 {
		return []string{st.Muted.Render(o.noneYet()), st.Muted.Render("[[delay_queue]], [[list_queue]]:"), st.Muted.Render("depth, due, in flight, longest wait")}
	}
	var t queueTallies
	for _, q := range snap.DelayQueues {
		if q.Error != "" { // the queue could not be read: the Queues view says why
			t.depth.unread()
			t.due.unread()
			t.inFlight.unread()
			continue
		}
		t.depth.add(&q.Depth)
		t.inFlight.add(q.InFlight)
		if q.Due == nil { // the scores are not due times: the split is unknown
			t.due.unread()
			continue
		}
		t.due.add(q.Due)
		name := q.Name
		if q.Pattern != "" { // a pattern's queues share its name: say which key
			name = q.Key
		}
		t.addLag(q.OldestDueAgeMS, name)
	}
	for _, e := range snap.JobQueues {
		q := e.Totals()
		t.depth.add(q.Scheduled)
		switch {
		case q.Scheduled == nil:
			t.due.add(nil) // no scheduled set: nothing falls due
		case q.Due == nil:
			t.due.unread() // a scheduled set whose scores are not times
		default:
			t.due.add(q.Due)
			t.addLag(q.OldestDueAgeMS, e.Name)
		}
		t.waiting.add(q.Waiting)
		t.active.add(q.Active)
		for _, jq := range e.Queues { // each queue's oldest waiting job, as the library times it
			t.addWait(jq.LatencyMS, jq.LatencyNote, e.Name+" "+jq.Queue)
		}
		t.jobs = true
		for _, tp := range e.Throughput {
			if tp.Error != "" { // kept, but not read: unknown, not absent
				why := e.Name + " " + cells.Throughput(tp)[0] + ": " + tp.Error
				t.run.unread(why)
				t.failed.unread(why)
				continue
			}
			t.run.add(tp.ProcessedTotal, tp.ProcessedPerSec, tp.RateMeasuring)
			t.failed.add(tp.FailedTotal, tp.FailedPerSec, tp.RateMeasuring)
		}
	}
	for _, q := range snap.ListQueues {
		if q.Error != "" && !q.Missing {
			t.waiting.unread()
			t.active.unread()
			continue
		}
		t.waiting.add(&q.Length)
		t.active.add(q.Processing)
		t.addWait(q.LatencyMS, q.LatencyNote, q.Name)
	}
	return o.queueLines(&t)
}

// queueLines are the Queues panel's rows, then a note for each total over only some queues.
func (o *overview) queueLines(t *queueTallies) []string {
	st := o.c.styles
	lagText, lagStyle := format.NotKept, st.Good
	if t.due.kept == 0 && t.due.unknown > 0 {
		lagText = format.Unknown
	}
	if t.lag != nil {
		lagText = format.Millis(*t.lag)
		if *t.lag > 0 {
			lagText += " (" + t.lagName + ")"
		}
		if *t.lag > o.c.opt.WaitWarning.Milliseconds() {
			lagStyle = st.Warn
		}
	}
	if t.waitUnknown > 0 { // some queue's oldest task carries no time: never green
		lagText += "+?"
		if t.lag == nil {
			lagText = format.Unknown
		}
		if t.lag == nil || *t.lag <= o.c.opt.WaitWarning.Milliseconds() {
			lagStyle = st.Muted
		}
	}
	lines := []string{
		row("depth / due now", t.depth.text()+" / "+t.due.text()),
		row("in flight", t.inFlight.text()),
		lagStyle.Render(row("longest wait", lagText)),
		row("waiting / active", t.waiting.text()+" / "+t.active.text()),
	}
	if t.jobs {
		value, notes := t.jobRates()
		lines = append(lines, row("jobs run / failed /s", value))
		for _, n := range notes {
			lines = append(lines, st.Muted.Render(n))
		}
	}
	for _, f := range []struct {
		label string
		t     *tally
	}{{"depth", &t.depth}, {"due", &t.due}, {"in flight", &t.inFlight}, {"waiting", &t.waiting}, {"active", &t.active}} {
		if n, ok := f.t.note(f.label); ok {
			lines = append(lines, st.Muted.Render(n))
		}
	}
	return lines
}

// jobRates are the jobs run and failed a second, one "measuring" for both while both are, and
// notes: how long the rates being measured have to go, why a count was not read.
func (q *queueTallies) jobRates() (string, []string) {
	run, failed := q.run.text(), q.failed.text()
	value := run + " / " + failed
	if run == format.Pending && failed == format.Pending {
		value = run
	}
	var notes []string
	if n := q.run.measuring + q.failed.measuring; n > 0 {
		slowest := q.run.slowest
		if f := q.failed.slowest; slowest == nil || f != nil && f.NeedSec-f.SpanSec > slowest.NeedSec-slowest.SpanSec {
			slowest = f
		}
		bound := "" // some rates are known: the sum is at least theirs
		if q.run.kept+q.failed.kept > 0 {
			bound = "≥: "
		}
		notes = append(notes, fmt.Sprintf("  %s%s still %s", bound, format.Count(n, "rate", "rates"), format.Measuring(slowest.SpanSec, slowest.NeedSec)))
	}
	if q.run.why != "" {
		notes = append(notes, "  jobs run not read: "+q.run.why)
	}
	return value, notes
}
