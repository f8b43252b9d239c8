package jobs

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sidekiq 6.4's default kill bounds (Sidekiq.options: dead_max_jobs, dead_timeout_in_seconds),
// which an app may change (Source.DeadMax, DeadTimeout).
const (
	SidekiqDeadMax     = 10_000
	SidekiqDeadTimeout = 180 * 24 * time.Hour
)

// deadBounds are the dead set's bounds a kill trims it to: the app's, else Sidekiq's defaults.
func (j sidekiqJobs) deadBounds() (int64, time.Duration) {
	most, age := j.deadMax, j.deadTimeout
	if most <= 0 {
		most = SidekiqDeadMax
	}
	if age <= 0 {
		age = SidekiqDeadTimeout
	}
	return most, age
}

// killAll is RetrySet#kill_all: SortedEntry#kill on each job, which takes it out of the retry
// set and hands it unchanged to DeadSet#kill: ZADD dead <now> <job>, then the dead set trimmed,
// ZREMRANGEBYSCORE -inf <now - dead_timeout> and ZREMRANGEBYRANK 0 -dead_max_jobs (deadBounds).
// Each kill scores its job at its own instant, so kill all does too, a microsecond after the one
// before, taking the retry set from its highest score down as Sidekiq's JobSet#each starts
// (each pages from the top, but as the set shrinks under it, it skips pages and comes back for
// them: when the trim takes jobs killed by the same kill all, which of those stay may differ
// from Sidekiq's; how many, and which older dead jobs go, do not). Sidekiq's death handlers,
// which run in the Ruby process that kills, are not called (as kill with notify_failure: false).
// Each chunk records first each job with its retry score, and the dead set's members the trim
// could take. Sidekiq 6.4's ScheduledSet has no kill_all.
func (j sidekiqJobs) killAll() bulkOp {
	retry, dead := j.key("retry"), j.key("dead")
	most, age := j.deadBounds()
	op := bulkOp{key: retry, keysEach: 2, spans: "Sidekiq's keys", note: j.trimNote(most, age), bySet: true, desc: true}
	var last float64 // the last job's dead score: each next one is later
	op.custom = func(ctx context.Context, rdb redis.UniversalClient, jobs []string, scores []float64, now time.Time) (*chunkCall, error) {
		at := max(float64(now.UnixMicro())/1e6, last+1e-6)
		cutoff := strconv.FormatFloat(at-age.Seconds(), 'f', -1, 64)
		trimmed, err := setTrimmed(ctx, rdb, dead, cutoff, len(jobs), most)
		if err != nil {
			return nil, err
		}
		c := &chunkCall{script: bulkApply, keys: []string{retry, dead}, members: len(jobs), undo: trimmed,
			args: []any{"to_set", cutoff, most}}
		for i, job := range jobs {
			last = at + float64(i)*1e-6
			c.args = append(c.args, job, strconv.FormatFloat(last, 'f', -1, 64))
			c.undo = append(c.undo, UndoTask{Kind: UndoToSet, Key: retry, Member: job, Score: scores[i], List: dead})
		}
		return c, nil
	}
	return op
}

// trimNote says what a kill's trim of the dead set takes, and where its bounds come from.
func (j sidekiqJobs) trimNote(most int64, age time.Duration) string {
	from := func(set bool, name string) string {
		if set {
			return name + " from the entry"
		}
		return "Sidekiq's default " + name
	}
	why := from(j.deadMax > 0, "dead_max_jobs") + ", " + from(j.deadTimeout > 0, "dead_timeout")
	if j.deadMax <= 0 || j.deadTimeout <= 0 {
		why += ": set them in the [[job_queue]] entry when the app changes them"
	}
	return fmt.Sprintf("As Sidekiq kills, its dead set is trimmed to its newest %d jobs of the last %s (%s); what the trim takes is recorded first, and undo brings it back.",
		most, ageText(age), why)
}

// ageText is a span in whole days when it is some, else as Go spells it.
func ageText(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + " days"
	}
	return d.String()
}

// bulkOp is how Sidekiq does a on every task of a section (bulk_layouts.go has the table).
func (j sidekiqJobs) bulkOp(queue string, sec TaskSection, a TaskAction) (bulkOp, error) {
	set, isSet := sidekiqSets[sec]
	switch {
	case queue != "" && sec == SectionWaiting && a == ActionDelete: // Queue#clear
		return bulkOp{keysEach: 1, spans: "Sidekiq's keys", list: &listOp{key: j.key("queue:" + queue), keys: noKeys,
			registry: j.key("queues"), member: queue}}, nil
	case queue != "" || !isSet:
		return bulkOp{}, bulkRefusal("Sidekiq", sec, a, "hourglass deletes all of a queue's list, and acts in bulk on Sidekiq's schedule, retry and dead sets")
	case a == ActionDelete:
		return bulkOp{key: j.key(set), keysEach: 1}, nil
	case a == ActionArchive && set == "retry":
		return j.killAll(), nil
	case a == ActionRunNow:
		retry := set != "schedule"
		move := func(member string, now time.Time) (string, string, string, error) {
			job, queue, err := sidekiqPushed(member, retry, now)
			return job, queue, j.key("queue:" + queue), err
		}
		return bulkOp{key: j.key(set), queues: j.key("queues"), keysEach: 2, move: move, spans: "Sidekiq's keys"}, nil
	}
	return bulkOp{}, bulkRefusal("Sidekiq", sec, a, "Sidekiq has no such action there")
}
