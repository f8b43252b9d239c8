package snapshot

import (
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// RepairAction is what a repair did, or would do, to one key.
type RepairAction struct {
	Key      string // escaped for display
	Family   string
	Kind     RepairKind
	ExpireAt time.Time // the window's end plus retention
	// Value is, for RepairSkipNotInteger, the string the key holds, escaped.
	Value string
	// Changed is, for RepairSkipChanged, what the repair found at write time: a TTL, another
	// type or a value that is not an integer (store.RepairHasTTL, RepairWrongType,
	// RepairNotInteger).
	Changed store.RepairOutcome
}

// RepairKind says what became of a key.
type RepairKind int

// What a repair does to a key without a TTL.
const (
	RepairExpire         RepairKind = iota // given EXPIREAT its window end plus retention
	RepairDelete                           // past that instant, deleted (DeleteExpired)
	RepairSkipExpired                      // past that instant, left (no DeleteExpired)
	RepairSkipWrongType                    // not a string, so not a counter: left
	RepairSkipNotInteger                   // a string but not a 64-bit integer, so not a counter hourglass writes: left
	RepairSkipChanged                      // changed between the sweep and the write (RepairAction.Changed): left as it is
)

// RepairCounts add up a repair.
type RepairCounts struct {
	KeysSeen, NoTTL, Expired, Deleted, SkippedPastExpiry, SkippedWrongType, Gone int64
	// SkippedNotInteger are strings of a family's shape that hold no 64-bit integer;
	// SkippedChanged, keys found changed when they were to be written.
	SkippedNotInteger, SkippedChanged int64
}
