package report

import (
	"fmt"
	"io"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// repairExamples is how many keys a repair names for each reason it left keys.
const repairExamples = 3

// RepairLog prints a repair as it goes. It writes a line for each key given its expiry or deleted
// (or, in a dry run, that would be). At the end come the keys left, by reason, each with its count
// and a few examples, then the summary. The examples are escaped, as the scanner hands them over.
type RepairLog struct {
	out    io.Writer
	dryRun bool
	loc    *time.Location
	now    func() time.Time // the server's clock
	skips  map[string]*repairSkip
}

// repairSkip is one reason keys were left: how many, and the first few.
type repairSkip struct {
	keys     int64
	examples []string
}

// NewRepairLog prints to out; times are shown in loc, against now (the server's clock).
func NewRepairLog(out io.Writer, dryRun bool, loc *time.Location, now func() time.Time) *RepairLog {
	return &RepairLog{out: out, dryRun: dryRun, loc: loc, now: now, skips: map[string]*repairSkip{}}
}

// Action hears of one key: an expiry or a deletion is printed at once, a key left is kept for
// Finish.
func (l *RepairLog) Action(a snapshot.RepairAction) {
	due := a.ExpireAt.In(l.loc).Format("2006-01-02 15:04")
	now := l.now()
	would := ""
	if l.dryRun {
		would = "would "
	}
	example := a.Key
	switch a.Kind {
	case snapshot.RepairExpire:
		fmt.Fprintf(l.out, "%sexpire  %s  at %s (in %s)\n", would, a.Key, due, format.Age(a.ExpireAt.Sub(now)))
		return
	case snapshot.RepairDelete:
		fmt.Fprintf(l.out, "%sdelete  %s  (past its expiry %s, %s ago)\n", would, a.Key, due, format.Age(now.Sub(a.ExpireAt)))
		return
	case snapshot.RepairSkipExpired:
		example += fmt.Sprintf("  (expiry %s, %s ago)", due, format.Age(now.Sub(a.ExpireAt)))
	case snapshot.RepairSkipNotInteger:
		example += "  (holds \"" + a.Value + "\")" // escaped already
	}
	reason := skipReason(a)
	s := l.skips[reason]
	if s == nil {
		s = &repairSkip{}
		l.skips[reason] = s
	}
	s.keys++
	if len(s.examples) < repairExamples {
		s.examples = append(s.examples, example)
	}
}

// skipReason names why a key was left, as the summary's counts are named.
func skipReason(a snapshot.RepairAction) string {
	switch a.Kind {
	case snapshot.RepairSkipExpired:
		return "past_expiry"
	case snapshot.RepairSkipWrongType:
		return "wrong_type"
	case snapshot.RepairSkipNotInteger:
		return "not_integer"
	}
	return "changed:" + string(a.Changed)
}

// skipOrder and skipWhy are the reasons in the order they are printed, with what each means.
var (
	skipOrder = []string{"past_expiry", "not_integer", "wrong_type",
		"changed:" + string(store.RepairHasTTL), "changed:" + string(store.RepairNotInteger), "changed:" + string(store.RepairWrongType)}
	skipWhy = map[string]string{
		"past_expiry":                           "past the instant they should have expired; --delete-expired deletes them",
		"not_integer":                           "strings that are not a 64-bit integer, so not counters hourglass writes",
		"wrong_type":                            "not strings, so not counters",
		"changed:" + string(store.RepairHasTTL): "given a TTL after the sweep read them",
		"changed:" + string(store.RepairNotInteger): "rewritten with a value that is not an integer after the sweep read them",
		"changed:" + string(store.RepairWrongType):  "replaced by another type after the sweep read them",
	}
)

// Finish prints the keys left, by reason, and the summary line.
func (l *RepairLog) Finish(n snapshot.RepairCounts) {
	var left int64
	for _, s := range l.skips {
		left += s.keys
	}
	if left > 0 {
		fmt.Fprintf(l.out, "left as they are: %s\n", format.Count(left, "key", "keys"))
	}
	for _, reason := range skipOrder {
		s := l.skips[reason]
		if s == nil {
			continue
		}
		fmt.Fprintf(l.out, "  %s  %s  %s\n", reason, format.Commas(s.keys), skipWhy[reason])
		for _, e := range s.examples {
			fmt.Fprintf(l.out, "      %s\n", e)
		}
	}
	fmt.Fprintln(l.out, RepairSummary(n, l.dryRun))
}

// RepairSummary is repair's last line.
func RepairSummary(n snapshot.RepairCounts, dryRun bool) string {
	prefix := "repair"
	if dryRun {
		prefix = "repair (dry run: nothing written)"
	}
	return fmt.Sprintf("%s: keys_seen=%d no_ttl=%d expiry_set=%d deleted=%d skipped_past_expiry=%d skipped_wrong_type=%d "+
		"skipped_not_integer=%d skipped_changed=%d gone=%d",
		prefix, n.KeysSeen, n.NoTTL, n.Expired, n.Deleted, n.SkippedPastExpiry, n.SkippedWrongType,
		n.SkippedNotInteger, n.SkippedChanged, n.Gone)
}
