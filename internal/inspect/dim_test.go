package inspect

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// hostileDims are an ad_revenue tuple whose dims hold an escape sequence, a newline and bytes
// that are not UTF-8.
var hostileDims = []string{"\x1b[31mred\nch", "ad\xff\x00"}

// TestDimReadsEveryRetainedWindow writes one hostile tuple's keys as a writer and its faults
// leave them (a good current hour and day, a string that is no integer, a list, a key without a
// TTL, hours with no key), then reads the tuple's detail from an older window's key: every
// retained window, hours then days, oldest first, each with its value or why not, its TTL and
// expiry against the window-aligned one, and its memory.
func TestDimReadsEveryRetainedWindow(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	ad := families(t)[1]
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	hour := store.WindowAt(store.Hour, now, shanghai)
	back := func(n int) store.Window {
		w := hour
		for range n {
			w = w.Prev()
		}
		return w
	}
	keyOf := func(w store.Window) string {
		k, err := ad.Key(w, hostileDims)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	day := store.WindowAt(store.Day, now, shanghai)
	rdb.Set(ctx, keyOf(hour), 42, 0)
	rdb.PExpireAt(ctx, keyOf(hour), ad.ExpireAt(hour))
	rdb.Set(ctx, keyOf(back(1)), "12abc", time.Hour)
	rdb.RPush(ctx, keyOf(back(2)), "x")
	rdb.Set(ctx, keyOf(back(3)), 7, 0)
	rdb.Set(ctx, keyOf(day), 1000, 0)
	rdb.PExpireAt(ctx, keyOf(day), ad.ExpireAt(day))

	w := watching(rdb, families(t), scanner.Options{Location: shanghai})
	d, err := w.Dim(ctx, "ad_revenue", keyOf(back(3)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Family != "ad_revenue" || d.Dims["channel"] != format.Escape(hostileDims[0]) || d.Dims["ad"] != format.Escape(hostileDims[1]) {
		t.Errorf("dims %q", d.Dims)
	}
	// 48 hours' retention keeps the current hour and the 48 before it; 30 days' the current day
	// and 30 before.
	if len(d.Windows) != 49+31 {
		t.Fatalf("%d windows, want 49 hours and 31 days", len(d.Windows))
	}
	hours, days := d.Windows[:49], d.Windows[49:]
	if hours[0].Key != keyOf(back(48)) || hours[48].Key != keyOf(hour) || days[30].Key != keyOf(day) {
		t.Errorf("windows run from %q to %q, and %q", hours[0].Window, hours[48].Window, days[30].Window)
	}
	for i, v := range hours[:45] {
		if !v.Missing || v.Value != nil || v.TTLMS != -2 || v.MemoryBytes != nil || v.Granularity != "hour" {
			t.Errorf("hour %d (%s) has no key: %+v", i, v.Window, v)
		}
	}
	cur := hours[48]
	if cur.Value == nil || *cur.Value != 42 || cur.MemoryBytes == nil || *cur.MemoryBytes <= 0 || cur.Note != "" {
		t.Errorf("the current hour: %+v", cur)
	}
	if !cur.WantExpiresAt.Equal(ad.ExpireAt(hour)) || cur.ExpiresAt.Sub(cur.WantExpiresAt).Abs() > time.Second {
		t.Errorf("the current hour expires at %v, want %v", cur.ExpiresAt, cur.WantExpiresAt)
	}
	if v := hours[47]; v.Value != nil || !strings.Contains(v.Note, "not a 64-bit integer: 12abc") || v.TTLMS <= 0 {
		t.Errorf("the hour before: %+v", v)
	}
	if v := hours[46]; v.Value != nil || !strings.Contains(v.Note, "another type") || v.TTLMS != -1 || v.MemoryBytes == nil {
		t.Errorf("a list: %+v", v)
	}
	if v := hours[45]; v.Value == nil || *v.Value != 7 || v.TTLMS != -1 || !v.ExpiresAt.IsZero() || v.WantExpiresAt.IsZero() {
		t.Errorf("a key without a TTL: %+v", v)
	}
	if v := days[30]; v.Value == nil || *v.Value != 1000 || v.Granularity != "day" || v.Window != day.Start.Format("20060102") {
		t.Errorf("the current day: %+v", v)
	}
	if d.Command != w.RedisCLI("GET", keyOf(hour)) || !strings.Contains(d.Command, `\x1b[31mred\x0ach`) {
		t.Errorf("command %s", d.Command)
	}

	if _, err := w.Dim(ctx, "ad_revenue", "flow:count:a:b:c:2026010100"); err == nil {
		t.Error("a key of another family was read as ad_revenue's")
	}
	if _, err := w.Dim(ctx, "nope", keyOf(hour)); err == nil {
		t.Error("an unknown family was read")
	}
}

// TestDimAsARestrictedUser: a user without MEMORY still gets the values and TTLs, each window
// saying memory was refused; a user without GET gets one error naming GET, the key and the user.
func TestDimAsARestrictedUser(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	ad := families(t)[1]
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	k := key(t, ad, store.Hour, now, hostileDims...)
	admin.Set(ctx, k, 5, time.Hour)
	for _, u := range []string{"nomem -memory", "noget -get"} {
		name, deny, _ := strings.Cut(u, " ")
		if err := admin.Do(ctx, "ACL", "SETUSER", name, "on", ">pw", "~*", "+@all", deny).Err(); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) drilled {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
		t.Cleanup(func() { _ = c.Close() })
		return watching(c, families(t), scanner.Options{Location: shanghai})
	}
	d, err := as("nomem").Dim(ctx, "ad_revenue", k)
	if err != nil {
		t.Fatal(err)
	}
	cur := d.Windows[48]
	if cur.Key != k || cur.Value == nil || *cur.Value != 5 || cur.TTLMS <= 0 || cur.MemoryBytes != nil ||
		!strings.Contains(cur.Note, "MEMORY USAGE refused") {
		t.Errorf("without MEMORY: %+v", cur)
	}
	for _, v := range d.Windows {
		if v.MemoryBytes != nil || !strings.Contains(v.Note, "MEMORY USAGE refused") {
			t.Errorf("%s: %+v", v.Window, v)
		}
	}

	_, err = as("noget").Dim(ctx, "ad_revenue", k)
	var ce *store.CommandError
	if !errors.As(err, &ce) || ce.Command != "GET" || ce.User != "noget" || !store.Permanent(err) {
		t.Fatalf("without GET: %v", err)
	}
}

// TestDimCountsAgainstTheBudget: at a low keys per second a detail reads only the newest windows,
// so a tuple read again at every refresh leaves the sweep most of its budget, and every window it
// reads is charged to the sweep's budget (the Watcher's Charge, whose effect on the sweep is
// tested in scanner).
func TestDimCountsAgainstTheBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	ad := families(t)[1]
	w := watching(rdb, families(t), scanner.Options{Location: shanghai, KeysPerSecond: 20})
	if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	charges := &charged{watched: w.Watcher}
	in := &Inspector{w: charges, rdb: rdb}
	d, err := in.Dim(ctx, "ad_revenue", key(t, ad, store.Hour, time.Now(), "c", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if charges.n != int64(len(d.Windows)) {
		t.Errorf("a detail of %d windows charged %d keys to the sweep's budget", len(d.Windows), charges.n)
	}
	// At 20 keys a second only the newest 40 of its 80 windows are read, each granularity ending
	// at its current window.
	now := time.Now()
	var hours, days []snapshot.WindowValue
	for _, v := range d.Windows {
		if v.Granularity == "day" {
			days = append(days, v)
		} else {
			hours = append(hours, v)
		}
	}
	if len(d.Windows) != 40 || len(hours) == 0 || len(days) == 0 ||
		!store.WindowAt(store.Hour, now, shanghai).Start.Equal(hours[len(hours)-1].Start) ||
		!store.WindowAt(store.Day, now, shanghai).Start.Equal(days[len(days)-1].Start) {
		t.Fatalf("at 20 keys/s the detail read %d windows (%d hours, %d days)", len(d.Windows), len(hours), len(days))
	}
}

func TestRetainedIsBounded(t *testing.T) {
	f, err := store.NewFamily(store.FamilySpec{Name: "long", Pattern: "l:<a>:<window>", HourFormat: "yyyyMMddHH",
		HourRetention: 90 * 24 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 3 * 365 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	wins := retained(f, now, shanghai)
	if len(wins) != maxDimHours+maxDimDays || !wins[maxDimHours-1].Contains(now) || !wins[len(wins)-1].Contains(now) ||
		wins[0].Granularity != store.Hour || wins[maxDimHours].Granularity != store.Day {
		t.Errorf("%d windows", len(wins))
	}
}

// TestInspectOnACluster: a tuple's windows spread over a cluster's masters are read in one
// pipeline, memory included, and the command it gives reads the current key through any node.
func TestInspectOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	ctx := t.Context()
	flow := families(t)[0]
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	hour := store.WindowAt(store.Hour, now, shanghai)
	dims := []string{"app", "\x1b[1mios", "10.0.0.1"}
	var keys []string
	for i, w := range []store.Window{hour.Prev().Prev(), hour.Prev(), hour} {
		k, err := flow.Key(w, dims)
		if err != nil {
			t.Fatal(err)
		}
		if err := rdb.Set(ctx, k, i+1, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	w := watching(rdb, families(t), scanner.Options{Location: shanghai})
	d, err := w.Dim(ctx, "flow", keys[0])
	if err != nil {
		t.Fatal(err)
	}
	last := d.Windows[len(d.Windows)-3:]
	for i, v := range last {
		if v.Key != keys[i] || v.Value == nil || *v.Value != int64(i+1) || v.MemoryBytes == nil || v.TTLMS <= 0 {
			t.Errorf("window %s: %+v", v.Window, v)
		}
	}
	if !strings.Contains(d.Command, " -c ") {
		t.Errorf("command %s", d.Command)
	}
	if out, err := exec.CommandContext(ctx, "bash", "-c", d.Command).CombinedOutput(); err != nil || string(out) != "3\n" {
		t.Errorf("%s read %q (%v), want the current hour's 3", d.Command, out, err)
	}
}
