package jobs

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Layout names a job library whose keys hourglass reads (never writes): each lays out its
// queues in Redis its own way, and its readers in <library>.go spell that layout once.
type Layout string

// Layouts lists the layouts in the order the docs and the config name them: libraries' rows.
var Layouts = func() []Layout {
	out := make([]Layout, len(libraries))
	for i, lib := range libraries {
		out[i] = lib.layout
	}
	return out
}()

// DefaultPrefix is the prefix or namespace the library uses when its user sets none ("" for
// Sidekiq without redis-namespace and Celery (kombu) without global_keyprefix).
func (l Layout) DefaultPrefix() string {
	if lib := libraryOf(l); lib != nil {
		return lib.prefix
	}
	return ""
}

// ParseLayout reads a layout's name.
func ParseLayout(s string) (Layout, error) {
	for _, l := range Layouts {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown job library layout %q (want %s)", s, layoutNames())
}

// Source is one library's keys under one prefix (Sidekiq's redis-namespace, BullMQ's prefix,
// kombu's global_keyprefix; RQ's and asynq's are fixed).
type Source struct {
	Layout Layout
	Prefix string
	// DeadMax and DeadTimeout are Sidekiq's dead_max_jobs and dead_timeout_in_seconds as the
	// app sets them, which bound its dead set when a job is killed (kill all trims it as
	// DeadSet#kill does); 0: Sidekiq's defaults, 10,000 jobs and 180 days. Sidekiq keeps them in
	// the app's options, not in Redis, so hourglass cannot read them.
	DeadMax     int64
	DeadTimeout time.Duration
}

// Key says what a key of a job library is.
type Key struct {
	// Queue is the queue the key belongs to; "" for a key of the library that belongs to no one
	// queue (Sidekiq's schedule set, Celery's unacked hash, a registry).
	Queue string
	// Registry is set for a key whose members name queues (Sidekiq's "queues", RQ's "rq:queues",
	// asynq's "asynq:queues", a kombu "_kombu.binding.<exchange>" set).
	Registry bool
	// Else, when set, is the queue the key belongs to instead, should Queue not be a queue of
	// its own: BullMQ's <q>:<id>:failed (a parent job's failed children) reads as the failed
	// set of a queue "<q>:<id>", which versions before 5 allowed. A sweep takes the key for
	// Else's when Else is a queue and Queue has no key but such ones.
	Else string
}

// Stats is one queue of a job library as the library itself counts it.
//
// A state the library does not keep for a queue is Absent (-1), never 0: Sidekiq keeps its
// scheduled, retry and dead sets for all queues together, so they are in the Shared stats, not a
// queue's; Celery keeps ETA tasks in the worker, not in Redis.
type Stats struct {
	Waiting   int64 // ready to run, not started (lists; BullMQ's prioritized and paused count here)
	Active    int64 // started, not finished
	Scheduled int64 // due later (scheduled, delayed, deferred)
	Retry     int64 // failed once, to run again
	Dead      int64 // failed for good (dead, failed, archived)
	Completed int64 // finished and still kept
	// Schedule is the scheduled set read as a delay queue: depth, due now, lag, next due. Nil when
	// the library has no such set for the queue.
	Schedule *store.DelayQueueStats
	// States are the library's own states with its own names, as its inspection API reports them
	// (BullMQ's getJobCounts, asynq's QueueInfo, RQ's registries, Sidekiq::Stats).
	States map[string]int64
	Paused bool
	// Latency is how long the oldest waiting job has waited, as the library defines it
	// (latency.go); -1 when it is not known, with LatencyNote saying why.
	Latency     time.Duration
	LatencyNote string
}

// Absent marks a Stats count the library does not keep there.
const Absent = -1

// StateNames returns the names of s.States in order.
func (s Stats) StateNames() []string {
	names := make([]string, 0, len(s.States))
	for n := range s.States {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// nowOrZero is the zero-safe server time a reader compares due times with.
func nowOrZero(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}

// jobReader is one library's layout: which keys are its, where its queues are registered, and how
// a queue is counted. Each library's reader lives in <library>.go with its layout
// documented at the top.
type jobReader interface {
	classify(key string) (Key, bool)
	registries() []string
	registered(ctx context.Context, rdb redis.Cmdable, registry string) ([]string, error)
	stats(ctx context.Context, rdb redis.Cmdable, queue string, now time.Time) (Stats, error)
	shared(ctx context.Context, rdb redis.Cmdable, now time.Time) (*Stats, error)
	notes() []string

	// taskSections are the sections the layout keeps for queue ("" for its shared sets), in the
	// order the console shows them (<library>_tasks.go).
	taskSections(queue string) []TaskSection
	// tasks reads one page of a section, count already held to 1..MaxTaskPage.
	tasks(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error)
	// act does an action on one task as the library itself does it (<library>_act.go).
	act(ctx context.Context, rdb redis.UniversalClient, queue string, sec TaskSection, t Task, a TaskAction, now time.Time) (string, error)
}

// reader is the library's reader of s's keys, under its default prefix when s names none; nil
// for a layout hourglass does not read.
func (s Source) reader() jobReader {
	lib := libraryOf(s.Layout)
	if lib == nil {
		return nil
	}
	if s.Prefix == "" {
		s.Prefix = lib.prefix
	}
	return lib.open(s)
}

// Classify says whether key is one of the library's keys, and which queue it belongs to. The
// scanner uses it to claim the library's keys and to find its queues during a sweep.
func (s Source) Classify(key string) (Key, bool) {
	if r := s.reader(); r != nil {
		return r.classify(key)
	}
	return Key{}, false
}

// Registries are the keys where the library registers its queues by name, read even before a
// sweep has found any of the library's keys (none for BullMQ, whose queues are found by their
// keys; Celery's bindings are found by the sweep).
func (s Source) Registries() []string { return s.reader().registries() }

// Registered returns the queue names a registry key holds.
func (s Source) Registered(ctx context.Context, rdb redis.Cmdable, registry string) ([]string, error) {
	names, err := s.reader().registered(ctx, rdb, registry)
	if err != nil {
		return nil, fmt.Errorf("store: %s queues in %s: %w", s.Layout, registry, err)
	}
	return names, nil
}

// Stats reads one queue as its Queue does, comparing due times with now (the server's time). It
// only reads.
func (s Source) Stats(ctx context.Context, rdb redis.Cmdable, queue string, now time.Time) (Stats, error) {
	st, err := s.Queue(queue).Stats(ctx, rdb, now)
	return *st.Job, err
}

// Shared reads what the library keeps for all its queues together (Sidekiq's scheduled, retry
// and dead sets and its busy workers); nil for a library that keeps everything per queue.
func (s Source) Shared(ctx context.Context, rdb redis.Cmdable, now time.Time) (*Stats, error) {
	st, err := s.SharedQueue().Stats(ctx, rdb, now)
	return st.Job, err
}

// QueueKeys are the keys of queue that Classify cannot tell are the library's by their name
// alone (Celery's list of a queue is named after the queue): a sweep that learns the queue's
// name from a registry claims them. None for the other layouts, whose keys say whose they are.
func (s Source) QueueKeys(queue string) []string {
	if k, ok := s.reader().(keysReader); ok {
		return k.queueKeys(queue)
	}
	return nil
}

// NamedQueueKeys are the keys of a queue that registry, one of the library's registry keys, names
// by its own name: Celery's list of the queue named as the exchange whose bindings registry holds
// (Celery declares its queues so), which QueueKeys claims once the registry is read. None for the
// other layouts, and for registries whose name says no queue.
func (s Source) NamedQueueKeys(registry string) []string {
	k, ok := s.reader().(keysReader)
	if !ok {
		return nil
	}
	if queue, ok := k.namedQueue(registry); ok {
		return k.queueKeys(queue)
	}
	return nil
}

// Notes say what the library keeps outside Redis, which no reading of Redis can count (Celery's
// ETA tasks wait in the worker's memory).
func (s Source) Notes() []string { return s.reader().notes() }
