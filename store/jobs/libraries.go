package jobs

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// libraries is the table of the job libraries hourglass reads, one row a library, in the order
// the docs and the config name them. Adding a library is its files (<library>.go with its
// reader and the layout at the top, <library>_tasks.go, <library>_act.go, and where it has them
// <library>_bulk.go, <library>_workers.go, <library>_throughput.go, and where its user picks
// its prefix <library>_marks.go, how its keys are recognised under it) and its row here.
var libraries = []*library{
	{layout: Sidekiq, open: func(s Source) jobReader {
		return sidekiqJobs{ns: s.Prefix, deadMax: s.DeadMax, deadTimeout: s.DeadTimeout}
	},
		marks: sidekiqMarker{}, byMarks: true, deadBounds: true,
		noPause:       "pausing a queue is Sidekiq Pro's (Queue#pause!), not open-source Sidekiq's, which keeps no paused state",
		noPauseShared: "the scheduled, retry and dead sets are no queue: Sidekiq pauses none of them",
		eviction: EvictionNeed{Who: "Sidekiq", Brief: "Sidekiq recommends noeviction",
			Says:   "WARNING: Your Redis instance will evict Sidekiq data under heavy load. The 'noeviction' maxmemory policy is recommended",
			Source: "Sidekiq's startup check (lib/sidekiq/cli.rb); https://github.com/sidekiq/sidekiq/wiki/Using-Redis#memory"}},
	{layout: BullMQ, prefix: "bull", open: func(s Source) jobReader { return bullmqJobs{prefix: s.Prefix} },
		marks:          bullmqMarker{},
		registryText:   "the keys it keeps once per queue (meta, id, events)",
		perQueue:       true,
		throughputNote: "BullMQ counts only while a Worker's metrics option is on, a point a minute for as long as it keeps",
		eviction: EvictionNeed{Who: "BullMQ", Brief: "BullMQ requires noeviction",
			Says:   "it is very important to configure the maxmemory-policy setting to noeviction. This is the only setting that guarantees the correct behavior of the queues",
			Source: "https://docs.bullmq.io/guide/going-to-production#max-memory-policy; its connection warns: It should be \"noeviction\""}},
	{layout: RQ, prefix: "rq", open: func(s Source) jobReader { return rqJobs{prefix: s.Prefix} },
		throughputNote: "RQ keeps counts per worker, since each started, and none a day: these are its live workers' (a worker that exits takes its counts with it)",
		noPause:        "RQ keeps no paused state for a queue (`rq suspend` stops every worker, not one queue)",
		eviction: EvictionNeed{Who: "RQ", Brief: "RQ loses jobs evicted (its maintainer)",
			Says:   "RQ's documentation names no policy; its maintainer: since RQ relies on Redis for its storage, you'll lose data if Redis decides to evict RQ related keys",
			Source: "https://github.com/rq/rq/issues/1280"}},
	{layout: Celery, open: func(s Source) jobReader { return celeryJobs{prefix: s.Prefix} },
		marks: celeryMarker{}, ownSeparator: true,
		untimed:      "Celery's messages carry no time they were sent",
		noThroughput: "Celery keeps no count of the tasks it ran in Redis: its workers send them as events, which a monitor such as Flower counts",
		noPause:      "Celery keeps no paused state for a queue in Redis: a worker stops consuming one (cancel_consumer), which the broker does not hold",
		eviction: EvictionNeed{Who: "Celery", Brief: "Celery asks Redis not to evict",
			Says:   "Redis may evict keys from the database in some situations ... configure the redis-server to not evict keys by setting ... the maxmemory-policy option to noeviction or allkeys-lru (allkeys-lru does evict: only noeviction keeps its keys)",
			Source: "https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html#key-eviction"}},
	{layout: Asynq, prefix: "asynq", open: func(s Source) jobReader { return asynqJobs{prefix: s.Prefix} },
		perQueue: true,
		eviction: EvictionNeed{Who: "asynq", Brief: "asynq names no policy; its tasks have no TTL",
			Says:   "asynq's documentation names no maxmemory-policy; it keeps each task in a hash with no TTL until the task is done, so an evicted key is a task lost",
			Source: "docs/jobs-asynq.md (its key layout)"}},
}

// library is one row of libraries: what hourglass knows of a job library beside its reader.
// What only some libraries can do is a method its reader has or lacks (bulkReader,
// pauseReader, throughputReader, keysReader); the row says why where it lacks one.
type library struct {
	layout Layout
	// prefix is the prefix or namespace the library uses when its user sets none.
	prefix string
	// open is the library's reader of a Source's keys.
	open func(s Source) jobReader
	// marks are how its keys are recognised under a prefix its user chose (nil: its prefix is
	// fixed); byMarks says its keys are its only where its marks proved it, under its default
	// prefix too (ByMarksOnly); ownSeparator that its prefix holds its own separator (kombu's
	// global_keyprefix, written straight before the key's name).
	marks        Marks
	byMarks      bool
	ownSeparator bool
	// registryText names the keys that stand for its registry of queues where they are not one
	// ("": its queue registry).
	registryText string
	// deadBounds says its dead set is bounded by options of its app's (Sidekiq's dead_max_jobs
	// and dead_timeout_in_seconds, Source.DeadMax and DeadTimeout).
	deadBounds bool
	// untimed says why the library's waiting jobs carry no time they were sent, "" when they
	// do: their queues' latency is then not known.
	untimed string
	// perQueue: the library counts the jobs it ran per queue, not for all queues together.
	perQueue bool
	// noThroughput says why the library keeps no count of the jobs it ran in Redis, and
	// throughputNote what its counts mean where they are not running totals kept in Redis.
	noThroughput, throughputNote string
	// noPause says why the library pauses no queue ("": no pause is hourglass's to offer), and
	// noPauseShared why it pauses none of its shared sets ("": noPause's reason).
	noPause, noPauseShared string
	// eviction is what the library asks of maxmemory-policy, in its own words.
	eviction EvictionNeed
}

// EvictionNeed is what a job library asks of Redis' maxmemory-policy: Brief in a few words, Says
// in its own, and Source where it says so.
type EvictionNeed struct {
	Who, Brief, Says, Source string
}

// EvictionNeed is what the library asks of maxmemory-policy; false for a layout hourglass does
// not read.
func (l Layout) EvictionNeed() (EvictionNeed, bool) {
	lib := libraryOf(l)
	if lib == nil {
		return EvictionNeed{}, false
	}
	return lib.eviction, true
}

// libraryOf is layout's row, or nil for a layout hourglass does not read.
func libraryOf(l Layout) *library {
	for _, lib := range libraries {
		if lib.layout == l {
			return lib
		}
	}
	return nil
}

// HasDeadBounds reports whether the library's dead set is bounded by options of its app's,
// which a Source's DeadMax and DeadTimeout give (Sidekiq's).
func (l Layout) HasDeadBounds() bool {
	lib := libraryOf(l)
	return lib != nil && lib.deadBounds
}

// layoutNames are the libraries' names as an error lists them: "a, b or c".
func layoutNames() string {
	names := make([]string, len(libraries))
	for i, lib := range libraries {
		names[i] = string(lib.layout)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// pauseReader is a library's reader that pauses a queue as the library does (pause.go).
type pauseReader interface {
	pauser(queue string) Pauser
}

// throughputReader is a library's reader that reads its counts of the jobs it ran
// (throughput.go): for each of queues where it counts per queue, and days UTC days up to now.
type throughputReader interface {
	throughput(ctx context.Context, rdb redis.Cmdable, queues []string, days int, now time.Time) ([]Throughput, error)
}

// keysReader is a library's reader some of whose keys Classify cannot tell are the library's by
// their name alone (Celery's list of a queue is named after the queue).
type keysReader interface {
	// queueKeys are such keys of queue.
	queueKeys(queue string) []string
	// namedQueue is the queue whose keys registry names by the queue's own name, if any.
	namedQueue(registry string) (string, bool)
}
