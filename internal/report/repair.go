package report

import (
	"fmt"
	"io"
	"time"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// RepairAction prints one line for what repair did, or would do in a dry run, to a key. Times
// are shown in loc; now is the server's clock.
func RepairAction(out io.Writer, a scanner.RepairAction, dryRun bool, loc *time.Location, now time.Time) {
	due := a.ExpireAt.In(loc).Format("2006-01-02 15:04")
	would := ""
	if dryRun {
		would = "would "
	}
	switch a.Kind {
	case scanner.RepairExpire:
		fmt.Fprintf(out, "%sexpire  %s  at %s (in %s)\n", would, a.Key, due, format.Age(a.ExpireAt.Sub(now)))
	case scanner.RepairDelete:
		fmt.Fprintf(out, "%sdelete  %s  (past its expiry %s, %s ago)\n", would, a.Key, due, format.Age(now.Sub(a.ExpireAt)))
	case scanner.RepairSkipExpired:
		fmt.Fprintf(out, "skip  %s  (past its expiry %s, %s ago; --delete-expired deletes it)\n", a.Key, due, format.Age(now.Sub(a.ExpireAt)))
	case scanner.RepairSkipWrongType:
		fmt.Fprintf(out, "skip  %s  (not a string, so not a counter)\n", a.Key)
	}
}

// RepairSummary is repair's last line.
func RepairSummary(n scanner.RepairCounts, dryRun bool) string {
	prefix := "repair"
	if dryRun {
		prefix = "repair (dry run: nothing written)"
	}
	return fmt.Sprintf("%s: keys_seen=%d no_ttl=%d expiry_set=%d deleted=%d skipped_past_expiry=%d skipped_wrong_type=%d gone=%d",
		prefix, n.KeysSeen, n.NoTTL, n.Expired, n.Deleted, n.SkippedPastExpiry, n.SkippedWrongType, n.Gone)
}
