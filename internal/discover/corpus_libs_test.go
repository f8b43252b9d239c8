package discover_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// jobsTestdata and limitsTestdata are where the job libraries' and the limiter libraries'
// fixtures are, from this package.
var (
	jobsTestdata   = filepath.Join("..", "..", "store", "jobs", "testdata")
	limitsTestdata = filepath.Join("..", "..", "store", "limits", "testdata")
)

// libraryFamilies lets each job library and limiter library write its own keys with the library
// itself: the store's fixtures, and the Go libraries' own clients.
func libraryFamilies(c *corpus) {
	url := "redis://" + c.srv.Addr + "/0"
	job := func(layout string) *family {
		return &family{name: layout, kind: discover.KindJobQueue, layout: layout}
	}
	limiter := func(layout string) *family {
		return &family{name: layout, kind: discover.KindLimiterLibrary, layout: layout}
	}
	fixture := func(f *family, interpreter, dir, script string, mods ...string) *family {
		if path := c.interpreter(interpreter, mods...); path != "" {
			c.add(f, func() { redistest.RunFixture(c.t, path, dir, nil, script, url) })
		}
		return f
	}
	fixture(job("sidekiq"), "ruby", filepath.Join(jobsTestdata, "sidekiq"), "fixture.rb", "sidekiq")
	fixture(job("rq"), "python3", filepath.Join(jobsTestdata, "rq"), "fixture.py", "rq")
	fixture(job("celery"), "python3", filepath.Join(jobsTestdata, "celery"), "fixture.py", "celery")
	fixture(job("bullmq"), "node", redistest.NodeDir(), "bullmq.mjs", "bullmq", "ioredis")
	c.add(job("asynq"), func() { asynqKeys(c) })
	fixture(limiter("limits"), "python3", filepath.Join(limitsTestdata, "limits"), "fixture.py", "limits")
	rlflex := fixture(limiter("rate-limiter-flexible"), "node", redistest.NodeDir(), "rlflex.mjs", "rate-limiter-flexible", "ioredis")
	if len(rlflex.keys) > 0 {
		// Its limiter with keyPrefix "login" is under no default prefix: a counter with a TTL.
		c.split(rlflex, &family{name: "rlflex own prefix", kind: discover.KindFixedLimiter, patterns: []string{"login:blocked"}},
			func(k string) bool { return strings.HasPrefix(k, "login:") })
	}
	c.add(limiter("redis_rate"), func() {
		lim := redis_rate.NewLimiter(c.rdb)
		for u := range 12 {
			for range 1 + u%4 {
				_, err := lim.Allow(c.t.Context(), fmt.Sprintf("api:%d", 700+u), redis_rate.PerHour(10))
				c.must(err)
			}
		}
	})
}

// interpreter is the path of an interpreter that loads mods, or "" when there is none here: the
// library's families are then left out, and the rest of the corpus still runs. Under CI=true a
// missing interpreter fails the test (redistest.Interpreter).
func (c *corpus) interpreter(name string, mods ...string) string {
	path := ""
	c.t.Run(fmt.Sprintf("%s %v", name, mods), func(t *testing.T) { path = redistest.Interpreter(t, name, mods...) })
	return path
}

// split moves from's keys that match into a family of their own.
func (c *corpus) split(from, to *family, match func(string) bool) {
	c.t.Helper()
	for _, k := range from.keys {
		if match(k) {
			to.keys = append(to.keys, k)
		}
	}
	from.keys = slices.DeleteFunc(from.keys, match)
	if len(to.keys) == 0 {
		c.t.Fatalf("no key of %s is %s's", from.name, to.name)
	}
	c.fams = append(c.fams, to)
}

// asynqKeys has asynq's client and a server of its own write a few queues: pending, scheduled,
// aggregating in a group, paused, and completed tasks kept by Retention.
func asynqKeys(c *corpus) {
	opt := asynq.RedisClientOpt{Addr: c.srv.Addr}
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	enqueue := func(typ string, opts ...asynq.Option) {
		_, err := client.Enqueue(asynq.NewTask(typ, []byte(`{"n":1}`)), opts...)
		c.must(err)
	}
	later := asynq.Queue("later")
	enqueue("send", later)
	enqueue("send", later, asynq.ProcessIn(time.Minute))
	enqueue("send", later, asynq.ProcessIn(2*time.Hour))
	enqueue("send", later, asynq.Group("batch"))
	enqueue("send", asynq.Queue("held"))
	c.must(insp.PauseQueue("held"))
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"work": 1}, LogLevel: asynq.FatalLevel})
	c.must(srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })))
	defer srv.Shutdown()
	enqueue("send", asynq.Queue("work"), asynq.Retention(time.Hour))
	enqueue("send", asynq.Queue("work"), asynq.Retention(time.Hour))
	redistest.Eventually(c.t, "asynq's server to complete its two tasks (its own count)", 20*time.Second, func() bool {
		q, err := insp.GetQueueInfo("work")
		return err == nil && q.Completed == 2
	})
}
