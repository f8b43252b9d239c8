package jobs

// BullMQ's actions on one job, as BullMQ 5 does them (checked against bullmq 5.81.5, whose
// Job.promote() and Job.remove() the scripts bullmq_promote.lua and bullmq_remove.lua make the
// same moves as: markers, priorities, events, deduplication keys and the queue's event trimming
// kept in step):
//
//	run a delayed job now   Job.promote(): to wait (or paused, or prioritized by its priority)
//	delete a waiting,       Job.remove(): out of its state, its keys deleted, a "removed" event
//	  delayed or failed job
//
// Each acts only on a queue whose meta names BullMQ 5 (its scripts differ by major version) and
// only while the job is still in a state the page showed. A job BullMQ would not remove (locked
// by a worker, the next job of a job scheduler) is left, and so is a job of a flow, whose parent
// and children BullMQ updates with it: remove those with Job.remove(). An active job is neither
// removed (its worker holds its lock) nor returned (BullMQ moves a stalled job back to wait by
// itself once its lock expires); a failed job is retried with Job.retry(), whose script also
// resets its attempts and finished state, which hourglass does not do.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var (
	bullmqPromote = luaScript("bullmq_promote")
	bullmqRemove  = luaScript("bullmq_remove")
)

// bullmqSectionStates are the states a section's jobs are listed from.
var bullmqSectionStates = map[TaskSection][]any{
	SectionWaiting: {"wait", "paused", "prioritized"}, SectionLater: {"delayed"}, SectionInFlight: {"active"}, SectionDead: {"failed"},
}

// bullmqLeft says why BullMQ's own action would leave a job, by the scripts' replies.
var bullmqLeft = map[string]string{
	"version":   "the queue's meta names no BullMQ 5 (its scripts differ by major version): use BullMQ's own Job API",
	"locked":    "a worker holds its lock: BullMQ removes no locked job",
	"scheduler": "it is a job scheduler's next job: BullMQ removes the scheduler, not the job",
	"flow":      "it is a job of a flow, whose parent and children BullMQ updates with it: use Job.remove()",
}

func (j bullmqJobs) act(ctx context.Context, rdb redis.UniversalClient, queue string, sec TaskSection, t Task, a TaskAction, _ time.Time) (string, error) {
	states, ok := bullmqSectionStates[sec]
	switch {
	case !ok:
		return "", actRefusal("BullMQ", sec, a, "BullMQ keeps no such state")
	case sec == SectionInFlight:
		return "", actRefusal("BullMQ", sec, a, "a worker holds an active job's lock: BullMQ neither removes it nor returns it (a stalled job goes back to wait by itself once its lock expires)")
	case a == ActionRunNow && sec == SectionDead:
		return "", actRefusal("BullMQ", sec, a, "BullMQ retries a failed job with Job.retry(), whose script also resets its attempts and finished state")
	case a == ActionRunNow && sec == SectionLater:
		return j.actPromote(ctx, rdb, queue, t)
	case a == ActionDelete:
		return j.actRemove(ctx, rdb, queue, states, t)
	}
	return "", actRefusal("BullMQ", sec, a, "BullMQ has no such action there (promote a delayed job, remove one that is not active)")
}

// actPromote moves a delayed job to waiting, as Job.promote() does.
func (j bullmqJobs) actPromote(ctx context.Context, rdb redis.UniversalClient, queue string, t Task) (string, error) {
	key := func(s string) string { return j.prefix + ":" + queue + ":" + s }
	keys := []string{key("delayed"), key("wait"), key("paused"), key("meta"), key("prioritized"), key("active"),
		key("pc"), key("events"), key("marker"), key(t.Member)}
	reply, err := bullmqPromote.Run(ctx, rdb, keys, t.Member).Text()
	switch {
	case err != nil:
		return "", actFail(rdb, "BullMQ promote script (EVALSHA)", keys[0], err)
	case reply == "gone":
		return "", actGone("promote", t, keys[0])
	case bullmqLeft[reply] != "":
		return "", fmt.Errorf("store: promote BullMQ job %s: %s: %w", store.QuoteName(t.Member), bullmqLeft[reply], ErrNotSupported)
	case reply != "promoted":
		return "", actFail(rdb, "BullMQ promote script (EVALSHA)", keys[0], fmt.Errorf("unexpected reply %q", reply))
	}
	return fmt.Sprintf("job %s of BullMQ queue %s is waiting now (promoted)", store.QuoteName(t.Member), store.QuoteName(queue)), nil
}

// actRemove removes a job that is in one of states, as Job.remove() does.
func (j bullmqJobs) actRemove(ctx context.Context, rdb redis.UniversalClient, queue string, states []any, t Task) (string, error) {
	prefix := j.prefix + ":" + queue + ":"
	keys := []string{prefix + "meta", prefix + "repeat", prefix + t.Member}
	reply, err := bullmqRemove.Run(ctx, rdb, keys, append([]any{t.Member, prefix}, states...)...).Text()
	switch {
	case err != nil:
		return "", actFail(rdb, "BullMQ remove script (EVALSHA)", keys[2], err)
	case reply == "gone":
		return "", actGone("remove", t, prefix+fmt.Sprint(states[0]))
	case bullmqLeft[reply] != "":
		return "", fmt.Errorf("store: remove BullMQ job %s: %s: %w", store.QuoteName(t.Member), bullmqLeft[reply], ErrNotSupported)
	case reply != "removed":
		return "", actFail(rdb, "BullMQ remove script (EVALSHA)", keys[2], fmt.Errorf("unexpected reply %q", reply))
	}
	return fmt.Sprintf("job %s removed from BullMQ queue %s", store.QuoteName(t.Member), store.QuoteName(queue)), nil
}
