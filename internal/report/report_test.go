package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestExamplesShowEscapedValuesOnce: a Snapshot's strings are escaped already, so the report
// prints a not-integer example's value as it is, not escaped a second time, and names every
// problem's example with its own note.
func TestExamplesShowEscapedValuesOnce(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	value := format.Escape("12\x1b[31m\"abc")
	s := &snapshot.Snapshot{Target: "t", Mode: "standalone", TakenAt: now, Scan: snapshot.ScanStats{Complete: true}}
	s.TTLHealth.NotInteger = snapshot.Problem{Keys: 1, Examples: []snapshot.Example{{Key: "k:1", Value: value}}}
	s.TTLHealth.NoTTL = snapshot.Problem{Keys: 1, Examples: []snapshot.Example{{Key: "k:2", TTLMS: -1, ExpireAt: now.Add(time.Hour)}}}
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	text := out.String()
	if want := `k:1  (value "` + value + `")`; !strings.Contains(text, want) {
		t.Errorf("report lacks %q:\n%s", want, text)
	}
	if want := "k:2  (no TTL; due 2026-11-23 13:00)"; !strings.Contains(text, want) {
		t.Errorf("report lacks %q:\n%s", want, text)
	}
}
