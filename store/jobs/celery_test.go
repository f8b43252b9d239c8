package jobs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// celeryReport is what store/jobs/testdata/celery/fixture.py prints: kombu's own counts.
type celeryReport struct {
	Now      float64             `json:"now"`
	Bindings map[string][]string `json:"bindings"` // exchange -> queues, Channel.get_table
	Queues   map[string]struct {
		MessageCount int64            `json:"message_count"` // queue_declare(...).message_count
		Lists        map[string]int64 `json:"lists"`         // LLEN of Channel._q_for_pri(queue, step)
	} `json:"queues"`
	Delivered       int64        `json:"delivered"` // len(channel.qos._delivered)
	Unacked         int64        `json:"unacked"`   // HLEN unacked
	UnackedIndex    int64        `json:"unacked_index"`
	HeldRoutingKeys []string     `json:"held_routing_keys"`
	Held            []celeryHeld `json:"held"`
}

// celeryHeld is a message the fixture's consumer holds unacknowledged.
type celeryHeld struct {
	Tag, ID, Task string
	Delivered     float64 // its score in unacked_index
}

func celeryFixture(t *testing.T, prefix string) (*redis.Client, celeryReport) {
	t.Helper()
	py := redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis")
	srv := redistest.Start(t)
	var rep celeryReport
	redistest.RunFixture(t, py, "testdata/celery", &rep, "fixture.py", "redis://"+srv.Addr+"/0", prefix)
	if len(rep.Queues) != 2 || rep.Delivered == 0 {
		t.Fatalf("fixture did not fill two queues and hold messages unacknowledged: %+v", rep)
	}
	return srv.Client(t), rep
}

// TestCeleryStatsMatchKombu reads what Celery sent, with and without kombu's global_keyprefix, and
// holds every number to kombu's own: the queues bound to each exchange, each queue's
// message_count over its priority lists, and the messages delivered and not acknowledged.
func TestCeleryStatsMatchKombu(t *testing.T) {
	for _, prefix := range []string{"", "myapp:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			rdb, rep := celeryFixture(t, prefix)
			ctx := t.Context()
			src := Source{Layout: Celery, Prefix: prefix}
			if regs := src.Registries(); !slices.Equal(regs, []string{prefix + "_kombu.binding.celery"}) {
				t.Errorf("registries %q, want the default exchange's bindings", regs)
			}
			for ex, want := range rep.Bindings {
				names, err := src.Registered(ctx, rdb, prefix+"_kombu.binding."+ex)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(slices.Sorted(slices.Values(names)), want) {
					t.Errorf("exchange %s: registered %v, kombu's get_table %v", ex, names, want)
				}
			}
			for name, q := range rep.Queues {
				st, err := src.Stats(ctx, rdb, name, unixSeconds(rep.Now))
				if err != nil {
					t.Fatal(err)
				}
				var lists int64
				var desc []string
				for _, k := range slices.Sorted(maps.Keys(q.Lists)) {
					lists += q.Lists[k]
					desc = append(desc, fmt.Sprintf("%q: %d", k, q.Lists[k]))
				}
				t.Logf("%s: kombu message_count %d, lists %s; hourglass %v", name, q.MessageCount, strings.Join(desc, ", "), st.States)
				want := [6]int64{q.MessageCount, Absent, Absent, Absent, Absent, Absent}
				if jobCountsOf(st) != want || lists != q.MessageCount || !maps.Equal(st.States, map[string]int64{"message_count": q.MessageCount}) {
					t.Errorf("%s: %v %v, want %v (lists %d)", name, jobCountsOf(st), st.States, want, lists)
				}
				// A message carries no time it was sent: a waiting queue's latency is unknown, and
				// says so; an empty one's is 0.
				qs, err := src.Queue(name).Stats(ctx, rdb, unixSeconds(rep.Now))
				if err != nil {
					t.Fatal(err)
				}
				if l := qs.Job; q.MessageCount > 0 && (l.Latency != -1 || !strings.Contains(l.LatencyNote, "no time they were sent")) || q.MessageCount == 0 && l.Latency != 0 {
					t.Errorf("%s: %d messages, latency %v (%q)", name, q.MessageCount, l.Latency, l.LatencyNote)
				}
			}
			if rep.Queues["mail"].Lists["mail\x06\x163"] == 0 {
				t.Errorf("no message in mail's priority list: %+v", rep.Queues["mail"])
			}

			sh, err := src.Shared(ctx, rdb, unixSeconds(rep.Now))
			if err != nil || sh == nil {
				t.Fatalf("shared %v: %v", sh, err)
			}
			t.Logf("kombu delivered %d, unacked %d; hourglass %v", rep.Delivered, rep.Unacked, sh.States)
			if sh.Active != rep.Delivered || sh.Active != rep.Unacked || sh.States["unacked_index"] != rep.UnackedIndex ||
				jobCountsOf(*sh) != [6]int64{Absent, rep.Unacked, Absent, Absent, Absent, Absent} {
				t.Errorf("shared %+v, kombu's delivered %d, unacked %d", *sh, rep.Delivered, rep.Unacked)
			}
			if len(src.Notes()) == 0 || !strings.Contains(src.Notes()[0], "ETA") || !strings.Contains(src.Notes()[0], "memory") {
				t.Errorf("notes %q do not say where ETA tasks are", src.Notes())
			}
			checkCeleryClassify(t, src, rdb)
		})
	}
}

func checkCeleryClassify(t *testing.T, src Source, rdb *redis.Client) {
	t.Helper()
	p := src.Prefix
	for k := range scanKeys(t, rdb) {
		_, ok := src.Classify(k)
		// The default queue's and the priority lists are known by name; mail's own list only
		// through the bindings.
		if k == p+"mail" {
			if ok {
				t.Errorf("Classify claims %q by its name alone", k)
			}
			continue
		}
		if !ok {
			t.Errorf("Classify does not claim kombu's key %q", k)
		}
	}
	cases := []struct {
		key  string
		want Key
		ok   bool
	}{
		{p + "_kombu.binding.celery", Key{Registry: true}, true},
		{p + "_kombu.binding.mail", Key{Registry: true}, true},
		{p + "_kombu.binding.celeryev", Key{}, true},
		{p + "_kombu.binding.celery.pidbox", Key{}, true},
		{p + "celery", Key{Queue: "celery"}, true},
		{p + "mail\x06\x163", Key{Queue: "mail"}, true},
		{p + "celery\x06\x169", Key{Queue: "celery"}, true},
		{p + "unacked", Key{}, true},
		{p + "unacked_index", Key{}, true},
		{p + "unacked_mutex", Key{}, true},
		{p + "6e1c.reply.celery.pidbox", Key{}, true},
		{"celery-task-meta-6e1c", Key{}, true},
		{p + "mail\x06\x1612", Key{}, false},
		{p + "mail\x06\x16", Key{}, false},
		{p + "orders:pending", Key{}, false},
	}
	if p != "" {
		cases = append(cases, struct {
			key  string
			want Key
			ok   bool
		}{"_kombu.binding.celery", Key{}, false})
	}
	for _, c := range cases {
		if got, ok := src.Classify(c.key); ok != c.ok || got != c.want {
			t.Errorf("Classify(%q) = %+v, %v; want %+v, %v", c.key, got, ok, c.want, c.ok)
		}
	}
}
