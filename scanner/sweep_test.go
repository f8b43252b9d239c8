package scanner

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

var shanghai = func() *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		panic(err)
	}
	return loc
}()

func families(t testing.TB) []*store.Family {
	t.Helper()
	var fams []*store.Family
	for _, spec := range []store.FamilySpec{
		{Name: "flow", Pattern: "flow:count:<app>:<device>:<ip>:<window>", HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour},
		{Name: "ad_revenue", Pattern: "{<channel>:<ad>}:<window>", HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour,
			DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour},
	} {
		f, err := store.NewFamily(spec)
		if err != nil {
			t.Fatal(err)
		}
		fams = append(fams, f)
	}
	return fams
}

// collect runs sweep to completion and returns every family key it read, by name, and the keys
// SCAN returned in all.
func collect(t *testing.T, s *Sweep) (map[string]Key, int) {
	t.Helper()
	keys := map[string]Key{}
	seen := 0
	err := s.Run(t.Context(), func(p Page) {
		seen += p.Seen
		for _, k := range p.Keys {
			keys[k.Name] = k // SCAN may return a key twice; the last read stands
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, seen
}

// TestSweepReadsKeysAsLegacyWritersWriteThem writes counters the ways hand-rolled Java writers
// commonly do (plain INCRBY with no TTL, INCRBY then EXPIRE from the first write, SET NX EX then
// INCR), plus a list and a non-integer where counters go, keys of no family and the writer's own
// sequence key, then sweeps in small pages: every family key is read once with its TTL and value,
// and nothing else is kept.
func TestSweepReadsKeysAsLegacyWritersWriteThem(t *testing.T) {
	for _, b := range []struct {
		name string
		rdb  redis.UniversalClient
	}{
		{"miniredis", redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})},
		{"redis-server", redistest.Start(t).Client(t)},
	} {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			rdb := b.rdb
			hour := time.Now().In(shanghai).Format("2006010215")
			day := time.Now().In(shanghai).Format("20060102")
			want := map[string]Key{}
			for i := range 40 { // INCRBY with no TTL: the EXPIRE forgotten, a leak
				name := fmt.Sprintf("flow:count:app%d:dev:10.0.0.%d:%s", i, i, hour)
				rdb.IncrBy(ctx, name, int64(i+1))
				want[name] = Key{TTL: NoTTL, Value: strconv.Itoa(i + 1)}
			}
			for i := range 30 { // INCRBY then EXPIRE 48h from the first write
				name := fmt.Sprintf("{ch:ad%d}:%s", i, hour)
				rdb.IncrBy(ctx, name, 5)
				rdb.Expire(ctx, name, 48*time.Hour)
				want[name] = Key{TTL: 48 * time.Hour, Value: "5"}
			}
			for i := range 20 { // SET NX EX then INCR
				name := fmt.Sprintf("{ch:ad%d}:%s", i, day)
				rdb.SetNX(ctx, name, "0", 30*24*time.Hour)
				rdb.Incr(ctx, name)
				want[name] = Key{TTL: 30 * 24 * time.Hour, Value: "1"}
			}
			listKey := "flow:count:x:y:z:" + hour
			rdb.RPush(ctx, listKey, "not a counter")
			want[listKey] = Key{TTL: NoTTL, WrongType: true}
			textKey := "{ch:text}:" + day
			rdb.Set(ctx, textKey, "12abc", 0)
			want[textKey] = Key{TTL: NoTTL, Value: "12abc"}
			for i := range 50 {
				rdb.Set(ctx, fmt.Sprintf("session:%d", i), "x", 0)
			}
			rdb.Set(ctx, "hourglass:seq:{1bz}:w:0", "3", time.Hour)

			s := New(rdb, families(t), Options{Count: 7, Location: shanghai})
			got, seen := collect(t, s)
			if seen < len(want)+51 {
				t.Errorf("SCAN returned %d keys, want at least %d", seen, len(want)+51)
			}
			if len(got) != len(want) {
				t.Errorf("read %d family keys, want %d", len(got), len(want))
			}
			for name, w := range want {
				k, ok := got[name]
				switch {
				case !ok:
					t.Errorf("%s was not read", name)
				case k.WrongType != w.WrongType || k.Value != w.Value:
					t.Errorf("%s: wrong type %v value %q, want %v %q", name, k.WrongType, k.Value, w.WrongType, w.Value)
				case w.TTL == NoTTL && k.TTL != NoTTL:
					t.Errorf("%s: TTL %v, want none", name, k.TTL)
				case w.TTL > 0 && (k.TTL <= w.TTL-time.Minute || k.TTL > w.TTL):
					t.Errorf("%s: TTL %v, want about %v", name, k.TTL, w.TTL)
				}
			}
			if k := got["{ch:ad3}:"+day]; k.Family == nil || k.Family.Name() != "ad_revenue" || k.Window.Granularity != store.Day || k.Dims[1] != "ad3" {
				t.Errorf("classification of a day key: %+v", k.Classified)
			}
			if !s.Done() {
				t.Error("Run returned before the sweep was done")
			}
			if p, err := s.Step(ctx); err != nil || p.Seen != 0 {
				t.Errorf("a step after the sweep is done: %+v, %v", p, err)
			}
		})
	}
}

// TestSweepCoversEveryMaster writes keys over a real 3-master cluster and checks one sweep reads
// them all, each master with its own cursor.
func TestSweepCoversEveryMaster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	hour := time.Now().In(shanghai).Format("2006010215")
	pipe := rdb.Pipeline()
	const n = 3000
	for i := range n {
		pipe.Set(t.Context(), fmt.Sprintf("{ch%d:ad}:%s", i, hour), i, time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := New(rdb, families(t), Options{Count: 100, Location: shanghai})
	got, seen := collect(t, s)
	if len(got) != n || seen < n {
		t.Fatalf("read %d of %d keys (SCAN returned %d)", len(got), n, seen)
	}
	s.mu.Lock()
	masters := len(s.cursors)
	s.mu.Unlock()
	if masters != 3 {
		t.Fatalf("the sweep kept %d cursors, want one per master (3)", masters)
	}
}

// TestStepHoldsTheBudget checks, on a fake clock, that a step is skipped until the keys already
// visited fit the budget, and that pausing saves no budget up.
func TestStepHoldsTheBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	pipe := rdb.Pipeline()
	for i := range 2000 {
		pipe.Set(t.Context(), fmt.Sprintf("k%d", i), "v", 0)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	s := New(rdb, families(t), Options{Count: 100, KeysPerSecond: 200})
	s.pace.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	first, err := s.Step(t.Context())
	if err != nil || first.Seen == 0 || s.Done() {
		t.Fatalf("first step: %d keys, done %v, %v", first.Seen, s.Done(), err)
	}
	if p, _ := s.Step(t.Context()); p.Seen != 0 {
		t.Fatalf("a step right after %d keys at 200/s visited %d more", first.Seen, p.Seen)
	}
	wait := time.Duration(float64(first.Seen) / 200 * float64(time.Second))
	advance(wait - time.Millisecond)
	if p, _ := s.Step(t.Context()); p.Seen != 0 {
		t.Fatal("a step ran a millisecond before the budget allowed")
	}
	advance(time.Millisecond)
	second, _ := s.Step(t.Context())
	if second.Seen == 0 {
		t.Fatal("no step once the budget allowed one")
	}
	advance(time.Hour) // a long pause saves up no more than the pacer's slack
	after, _ := s.Step(t.Context())
	if after.Seen == 0 {
		t.Fatal("no step after a pause")
	}
	// A step whose SCAN returned fewer keys than the slack's worth leaves room for another: the
	// keys of the steps run back to back after the pause, but for the last, fit in the slack.
	slack := int(pacerSlack.Seconds() * 200)
	charged, last, runs := after.Seen, 0, 0
	for ; runs < 20; runs++ {
		p, _ := s.Step(t.Context())
		if p.Seen == 0 {
			break
		}
		charged, last = charged+last, p.Seen
	}
	if runs == 20 || runs > 0 && charged > slack {
		t.Fatalf("after a pause, %d more steps ran back to back, charged %d keys before the last; the slack allows %d", runs, charged, slack)
	}
}

func TestPacerUnlimited(t *testing.T) {
	p := NewPacer(0, time.Now)
	p.Spend(1 << 30)
	if !p.ready() || p.Wait(t.Context()) != nil {
		t.Fatal("an unlimited pacer held a step back")
	}
}

// TestFailedFirstStepIsRetried has Redis refuse the first SCAN: the sweep reports the error and,
// once Redis answers again, scans from the start instead of taking itself for done.
func TestFailedFirstStepIsRetried(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	hour := time.Now().In(shanghai).Format("2006010215")
	for i := range 20 {
		m.Set(fmt.Sprintf("{ch:ad%d}:%s", i, hour), "1")
	}
	s := New(rdb, families(t), Options{Count: 5, Location: shanghai})
	m.SetError("LOADING Redis is loading the dataset in memory")
	if _, err := s.Step(t.Context()); err == nil {
		t.Fatal("a step against a refusing Redis reported no error")
	}
	if s.Done() {
		t.Fatal("a sweep whose only step failed says it is done")
	}
	m.SetError("")
	got, _ := collect(t, s)
	if len(got) != 20 {
		t.Fatalf("read %d of 20 keys after the failed first step", len(got))
	}
}

// TestMastersChangedRestartsTheSweep fails a master over between two slices of a sweep, after
// that master was swept to its end: the replica it hands its slots to holds the same keys, so the
// sweep must start over rather than scan it from the beginning and count its keys twice.
func TestMastersChangedRestartsTheSweep(t *testing.T) {
	cl := redistest.StartClusterReplicas(t, 3, 1)
	cc := cl.Client(t)
	ctx := t.Context()

	// The master that Failover will hand over: the one replicating to the first replica listed.
	var failing string
	for _, addr := range cl.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		role, err := n.Do(ctx, "ROLE").Slice()
		n.Close()
		if err == nil && len(role) > 2 && role[0] == "slave" {
			failing = net.JoinHostPort(fmt.Sprint(role[1]), fmt.Sprint(role[2]))
			break
		}
	}
	if failing == "" {
		t.Fatal("no replica found")
	}
	// A few keys on that master, so a sweep finishes it at once; many on another, so the
	// sweep is still under way when the failover comes.
	var few, many int
	var onFailing string
	for i := 0; few < 20 || many < 5000; i++ {
		key := fmt.Sprintf("{k%d}:x", i)
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		switch addr := m.Options().Addr; {
		case addr == failing && few < 20:
			few++
			onFailing = key
		case addr != failing && many < 5000:
			many++
		default:
			continue
		}
		if err := cc.Set(ctx, key, 1, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}

	s := New(cc, families(t), Options{Count: 100, KeysPerSecond: 1000})
	seen := 0
	visit := func(p Page) { seen += p.Seen }
	for deadline := time.Now().Add(20 * time.Second); !s.done[failing]; {
		if err := s.RunUntil(ctx, time.Now().Add(100*time.Millisecond), visit); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failing master was not swept to its end in time (%d keys seen)", seen)
		}
	}
	if s.Done() {
		t.Fatalf("the sweep ended (%d keys seen) before the failover; the test would test nothing", seen)
	}
	if cl.Failover(t) == "" {
		t.FailNow()
	}
	redistest.Eventually(t, "the client to see the promoted master", 20*time.Second, func() bool {
		cc.ReloadState(ctx)
		m, err := cc.MasterForKey(ctx, onFailing)
		return err == nil && m.Options().Addr != failing
	})
	// The client may still route by a map it read from a node that had not yet heard of the
	// failover; slices on that map scan only the old masters, which is sound. The first slice
	// that lists the promoted master must stop the sweep rather than scan it.
	var err error
	redistest.Eventually(t, "a slice to see the promoted master", 20*time.Second, func() bool {
		cc.ReloadState(ctx)
		err = s.RunUntil(ctx, time.Now().Add(100*time.Millisecond), visit)
		return err != nil || s.Done()
	})
	if !errors.Is(err, ErrMastersChanged) {
		t.Fatalf("a slice after the failover: %v (%d keys seen of %d), want ErrMastersChanged", err, seen, few+many)
	}
	if seen > few+many {
		t.Fatalf("%d keys seen of %d: the promoted master was scanned", seen, few+many)
	}
}
