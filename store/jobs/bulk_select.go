package jobs

// Which tasks a bulk action (bulk.go) takes: a filter's selection, counted over the whole
// section, and a set's members in its own order.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// PlanBulkMatching is PlanBulk of the tasks match keeps: the whole section is read, page by
// page, and its matching tasks counted (Tasks, of Scanned), their bytes the set's shared out by
// their part of it, the time for them; the plan carries match to the run. wait, when not nil, is
// called before each page with the tasks it reads, to hold the reads to a keys/s budget (an
// error, the context ended, stops the count); progress, when not nil, after each page with the
// tasks read (Done) of the section's (Planned). It writes nothing.
func PlanBulkMatching(ctx context.Context, rdb redis.Cmdable, q Queue, sec TaskSection, a TaskAction, keysPerSecond int, now time.Time, match func(Task) bool,
	wait func(ctx context.Context, keys int) error, progress func(BulkResult)) (BulkPlan, error) {
	if op, err := bulkOpOf(q, sec, a); err == nil && (op.list != nil || op.lists != nil) && match != nil {
		return BulkPlan{}, fmt.Errorf("store: a filter's selection of a list section is acted on one task at a time: %w", ErrNotSupported)
	}
	plan, err := PlanBulk(ctx, rdb, q, sec, a, keysPerSecond, now)
	if err != nil || match == nil {
		return plan, err
	}
	all := plan.Tasks
	var kept int64
	for offset := int64(0); ; {
		if wait != nil {
			if err := wait(ctx, MaxTaskPage); err != nil {
				return plan, err
			}
		}
		page, err := q.Tasks(ctx, rdb, sec, offset, MaxTaskPage, now)
		if err != nil {
			return plan, err
		}
		for _, t := range page.Tasks {
			if match(t) {
				kept++
			}
		}
		offset += int64(len(page.Tasks))
		if progress != nil {
			progress(BulkResult{Planned: max(all, offset), Done: offset})
		}
		if len(page.Tasks) == 0 {
			plan.Scanned = offset
			break
		}
	}
	plan.Tasks, plan.Match = kept, match
	if plan.Bytes > 0 && all > 0 {
		plan.Bytes = plan.Bytes * kept / all
		plan.BytesNote += ", for the filter's share"
	}
	if keysPerSecond > 0 {
		plan.Estimate = time.Duration(float64(kept*int64(plan.KeysEach)) / float64(keysPerSecond) * float64(time.Second))
	}
	return plan, nil
}

// setPage reads count members of set from offset, in the set's order (desc: highest score
// first).
func setPage(ctx context.Context, rdb redis.UniversalClient, set string, offset int64, count int, desc bool) ([]Task, error) {
	read, name := rdb.ZRange, "ZRANGE"
	if desc {
		read, name = rdb.ZRevRange, "ZREVRANGE"
	}
	members, err := read(ctx, set, offset, offset+int64(count)-1).Result()
	if err != nil {
		return nil, actFail(rdb, name, set, err)
	}
	tasks := make([]Task, len(members))
	for i, m := range members {
		tasks[i] = Task{Member: m, ID: m}
	}
	return tasks, nil
}

// bulkPage reads the next count tasks of the section, in pages of at most MaxTaskPage.
func bulkPage(ctx context.Context, rdb redis.Cmdable, q Queue, sec TaskSection, offset int64, count int, now time.Time) ([]Task, error) {
	var tasks []Task
	for len(tasks) < count {
		page, err := q.Tasks(ctx, rdb, sec, offset+int64(len(tasks)), min(count-len(tasks), MaxTaskPage), now)
		if err != nil {
			return tasks, err
		}
		tasks = append(tasks, page.Tasks...)
		if len(page.Tasks) == 0 {
			break
		}
	}
	return tasks, nil
}
