package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// writeUnclaimedKeys writes keys no entry of the shipped config claims: 30 hourly counters, 12
// sessions holding text, one stream, and one key whose name would drive a terminal. It returns
// how many keys that is.
func writeUnclaimedKeys(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	ctx := t.Context()
	hour := time.Now().UTC().Format("2006010215")
	p := rdb.Pipeline()
	for i := range 30 {
		p.Set(ctx, fmt.Sprintf("hits:%s:%d", hour, i), i+1, 49*time.Hour)
	}
	for i := range 12 {
		p.Set(ctx, fmt.Sprintf("sess:%d", i), "a session of some user", time.Hour)
	}
	p.XAdd(ctx, &redis.XAddArgs{Stream: "events", Values: []any{"k", "v"}})
	p.Set(ctx, "\x1b[2Jodd", "x", 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return 44
}

// TestSnapshotUnclaimed writes keys no entry claims beside a family's: the JSON counts them
// exactly, groups them with their kinds and memory, and the text report's Unclaimed keys section
// gives the same count, its largest groups and the pointer to discover, with no raw escape.
func TestSnapshotUnclaimed(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	path, cfg := utcConfig(t, srv.Addr)
	rdb.Set(t.Context(), familyKey(t, cfg, "flow", store.Hour, time.Now(), "app", "ios", "10.0.0.1"), 3, time.Hour)
	want := writeUnclaimedKeys(t, rdb)

	code, out, errOut := hg(t, "snapshot", "--json", "--config", path, "--keys-per-second", "0")
	if code != exitOK {
		t.Fatalf("snapshot --json: exit %d, %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("output is not a snapshot: %v", err)
	}
	u := snap.Unclaimed
	if u.Keys != want || snap.Scan.KeysSeen != want+1 {
		t.Errorf("unclaimed keys %d of %d seen, want %d of %d", u.Keys, snap.Scan.KeysSeen, want, want+1)
	}
	if u.Bytes == nil || *u.Bytes <= 0 || u.Sampled == 0 || strings.Contains(u.BytesNote, "refused") {
		t.Errorf("unclaimed memory %v (%s), %d sampled", u.Bytes, u.BytesNote, u.Sampled)
	}
	kinds := map[string]string{}
	var sum int64
	for _, g := range u.Groups {
		kinds[g.Pattern] = string(g.Kind)
		sum += g.Keys
	}
	if sum != want || kinds["hits:<window>:<id>"] != "counter" || kinds["sess:<sess>"] != "other" || kinds["events"] != "other" {
		t.Errorf("groups add up to %d (want %d), kinds %v", sum, want, kinds)
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Error("a raw escape reached the JSON")
	}
	// The JSON's own field names, as docs/commands.md lists them.
	var raw struct {
		Unclaimed map[string]any `json:"unclaimed"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"keys", "bytes", "bytes_note", "sampled", "groups"} {
		if _, ok := raw.Unclaimed[f]; !ok {
			t.Errorf("the JSON's unclaimed has no %q: %v", f, raw.Unclaimed)
		}
	}

	code, out, errOut = hg(t, "snapshot", "--config", path, "--keys-per-second", "0")
	if code != exitOK {
		t.Fatalf("snapshot: exit %d, %s", code, errOut)
	}
	section := out[max(strings.Index(out, "Unclaimed keys: "), 0):]
	for _, re := range []string{
		fmt.Sprintf(`(?m)^Unclaimed keys: %d in %d groups, claimed by no entry of the config$`, want, len(u.Groups)),
		`(?m)^memory: ~\d+(\.\d)? [KM]?i?B \(estimated: `,
		`(?m)^  PATTERN +KIND +KEYS +MEMORY +CONFIDENCE$`,
		`(?m)^  hits:<window>:<id> +counter +30 +~\d+(\.\d)? [KM]?i?B +high$`,
		`(?m)^  sess:<sess> +other +12 `,
		"(?m)^discover: `hourglass discover` ",
	} {
		if !regexp.MustCompile(re).MatchString(section) {
			t.Errorf("the report's unclaimed section does not match %s:\n%s", re, section)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Error("a raw escape reached the report")
	}
}

// TestSnapshotNoneUnclaimed: when every key is claimed, the report says so, and the JSON says
// the same: no key, 0 bytes (known: there is nothing to estimate), no note of a memory unknown.
func TestSnapshotNoneUnclaimed(t *testing.T) {
	srv := redistest.Start(t)
	path, cfg := utcConfig(t, srv.Addr)
	srv.Client(t).Set(t.Context(), familyKey(t, cfg, "flow", store.Hour, time.Now(), "app", "ios", "10.0.0.1"), 3, time.Hour)
	code, out, errOut := hg(t, "snapshot", "--config", path, "--keys-per-second", "0")
	_, unclaimed, _ := strings.Cut(out, "\nUnclaimed keys") // the server's section above says its memory
	if code != exitOK || !strings.Contains(out, "\nUnclaimed keys: none ") || strings.Contains(unclaimed, "memory") {
		t.Errorf("exit %d, %s\n%s", code, errOut, out)
	}
	code, out, errOut = hg(t, "snapshot", "--json", "--config", path, "--keys-per-second", "0")
	var snap struct {
		Unclaimed map[string]json.RawMessage `json:"unclaimed"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &snap) != nil {
		t.Fatalf("exit %d, %s\n%s", code, errOut, out)
	}
	u := snap.Unclaimed
	if string(u["keys"]) != "0" || string(u["bytes"]) != "0" || u["bytes_note"] != nil || string(u["groups"]) != "[]" {
		t.Errorf("unclaimed in the JSON: keys %s, bytes %s, bytes_note %s, groups %s; want 0, 0, none, []", u["keys"], u["bytes"], u["bytes_note"], u["groups"])
	}
}

// writeEveryType writes unclaimed keys of every type the sweep samples, so that each value read
// it makes (STRLEN and GETRANGE, ZCARD and ZRANGE, LLEN, HLEN, SCARD, XLEN) is needed.
func writeEveryType(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := t.Context()
	hour := time.Now().UTC().Format("2006010215")
	p := rdb.Pipeline()
	for i := range 3 {
		p.Set(ctx, fmt.Sprintf("hits:%s:%d", hour, i), i+1, 49*time.Hour)
		p.ZAdd(ctx, fmt.Sprintf("sched:%d", i), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "task"})
		p.RPush(ctx, fmt.Sprintf("jobs:%d", i), "job")
		p.HSet(ctx, fmt.Sprintf("user:%d", i), "name", "x")
		p.SAdd(ctx, fmt.Sprintf("tags:%d", i), "a")
		p.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("events:%d", i), Values: []any{"k", "v"}})
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkSampled fails the test unless every unclaimed group was sampled, with nothing refused and
// the memory known: what a user with docs/production.md's read-only rule must get.
func checkSampled(t *testing.T, snap *snapshot.Snapshot) {
	t.Helper()
	u := snap.Unclaimed
	if u.Keys == 0 || u.Bytes == nil || strings.Contains(u.BytesNote, "refused") {
		t.Errorf("unclaimed keys: %d, bytes %v, note %q; want them sampled, nothing refused", u.Keys, u.Bytes, u.BytesNote)
	}
	for _, g := range u.Groups {
		if g.Sampled == 0 || g.Kind == "undecided" {
			t.Errorf("unclaimed group %s: %d sampled, kind %s", g.Pattern, g.Sampled, g.Kind)
		}
	}
}
