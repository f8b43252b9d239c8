package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// snapshotWith returns a complete Snapshot whose unclaimed keys are filled by fill.
func snapshotWith(fill func(s *snapshot.Snapshot)) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Target: "t", Mode: "standalone", TakenAt: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC),
		Scan: snapshot.ScanStats{Complete: true}}
	fill(s)
	return s
}

// unclaimedSection returns the report's Unclaimed keys section: from its head line to the end.
func unclaimedSection(t *testing.T, s *snapshot.Snapshot) string {
	t.Helper()
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	text := out.String()
	i := strings.Index(text, "Unclaimed keys: ")
	if i < 0 {
		t.Fatalf("the report has no Unclaimed keys section:\n%s", text)
	}
	return text[i:]
}

func ptr(n int64) *int64 { return &n }

// TestUnclaimedNone: a sweep that found every key claimed says so in one line.
func TestUnclaimedNone(t *testing.T) {
	got := unclaimedSection(t, snapshotWith(func(*snapshot.Snapshot) {}))
	if want := "Unclaimed keys: none (every key seen belongs to an entry of the config)\n"; got != want {
		t.Errorf("section %q, want %q", got, want)
	}
}

// TestUnclaimedGroups: the count, the memory with its note, the ten largest groups as an aligned
// table (a group with no sampled memory shows ?), the rest summed, and the pointer to discover.
func TestUnclaimedGroups(t *testing.T) {
	s := snapshotWith(func(s *snapshot.Snapshot) {
		u := &s.Unclaimed
		u.Keys, u.Bytes, u.Sampled = 1500, ptr(3<<20), 60
		u.BytesNote = "estimated: each group's sampled keys' mean MEMORY USAGE times its keys"
		u.Groups = append(u.Groups, groupOf("cache:user:<user>", "other", 1000, ptr(2<<20), "high"),
			groupOf("hits:<window>:<id>", "counter", 300, ptr(1<<20), "high"))
		u.Groups = append(u.Groups, groupOf("odd:<x>", "undecided", 100, nil, "low"))
		for i := range 9 { // 12 groups in all: the last two (3 and 2 keys) are not shown
			u.Groups = append(u.Groups, groupOf(fmt.Sprintf("g%02d:<id>", i), "other", int64(10-i), ptr(100), "medium"))
		}
	})
	got := unclaimedSection(t, s)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{
		"Unclaimed keys: 1,500 in 12 groups, claimed by no entry of the config",
		"memory: ~3.0 MiB (estimated: each group's sampled keys' mean MEMORY USAGE times its keys)",
		"  PATTERN             KIND        KEYS    MEMORY  CONFIDENCE",
		"  cache:user:<user>   other      1,000  ~2.0 MiB  high",
		"  hits:<window>:<id>  counter      300  ~1.0 MiB  high",
		"  odd:<x>             undecided    100         ?  low",
		"  g00:<id>            other         10    ~100 B  medium",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("line %d:\n got %q\nwant %q\nsection:\n%s", i, at(lines, i), w, got)
		}
	}
	// Ten rows, then the two groups left out (3 and 2 keys) summed, then discover.
	rows := 0
	for _, l := range lines {
		if regexp.MustCompile(`^  \S+:<\w+>`).MatchString(l) {
			rows++
		}
	}
	if rows != 10 {
		t.Errorf("%d group rows, want the 10 largest:\n%s", rows, got)
	}
	if !strings.Contains(got, "\n  2 more groups, 5 keys\n") {
		t.Errorf("the groups left out are not summed (want 2 more groups, 5 keys):\n%s", got)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "`hourglass discover`") {
		t.Errorf("the section does not end pointing to hourglass discover: %q", last)
	}
}

// TestUnclaimedMemoryUnknown: when no sample's memory could be read the memory is unknown with
// the sweep's reason, and the groups' cells say ?.
func TestUnclaimedMemoryUnknown(t *testing.T) {
	note := "TYPE refused: NOPERM this user has no permissions to run the 'type' command; groups are by name only"
	s := snapshotWith(func(s *snapshot.Snapshot) {
		u := &s.Unclaimed
		u.Keys, u.BytesNote = 7, note
		u.Groups = []discover.Group{groupOf("sess:<sess>", "undecided", 7, nil, "low")}
	})
	got := unclaimedSection(t, s)
	for _, want := range []string{
		"Unclaimed keys: 7 in 1 group, claimed by no entry of the config\n",
		"\nmemory: unknown: " + note + "\n",
		"\n  sess:<sess>  undecided     7       ?  low\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "more group") {
		t.Errorf("one group, yet some are said to be left out:\n%s", got)
	}
}

// groupOf is a discover group as a sweep would report it.
func groupOf(pattern, kind string, keys int64, b *int64, conf string) discover.Group {
	return discover.Group{Pattern: pattern, Kind: discover.Kind(kind), Keys: keys, Bytes: b, Confidence: discover.Confidence(conf)}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// TestInferredNamesTheLimitersNotCounted: with no config, the entries section lists what was
// adopted and names the limiters left uncounted because their keys do not hold their limit.
func TestInferredNamesTheLimitersNotCounted(t *testing.T) {
	s := snapshotWith(func(s *snapshot.Snapshot) {
		s.Inferred = &snapshot.Inferred{Entries: []discover.Entry{{Table: "limiter", Name: "limits", Layout: "limits"}}}
		s.Unclaimed = discover.Result{Keys: 5, Groups: []discover.Group{
			{Pattern: "rlflx:<key>", Kind: discover.KindLimiterLibrary, Keys: 4, Confidence: discover.Medium,
				Entry: &discover.Entry{Table: "limiter", Name: "rate-limiter-flexible", Layout: "rate-limiter-flexible", Window: "1m", Limit: 8, Guessed: []string{"window", "limit"}}},
			{Pattern: "lock:<job>", Kind: discover.KindLock, Keys: 1, Confidence: discover.Low, Entry: &discover.Entry{Table: "lock", Name: "lock", Pattern: "lock:<job>"}},
		}}
	})
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	want := "entries: 1 inferred from the keys (no config file; `hourglass discover` writes them as one):\n" +
		"  [[limiter]] limits  keys of limits, where it puts them by default\n" +
		"  not counted: rlflx:<key> (limiters whose keys do not hold their limit; `hourglass discover` writes them for you to set it)\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("want\n%s\nin\n%s", want, out.String())
	}
}
