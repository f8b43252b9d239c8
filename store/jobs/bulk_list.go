package jobs

// Bulk actions on a list section (a queue's waiting list), each as the library's own API does it
// to the whole list, in chunks (bulk_list.lua):
//
//	Sidekiq   delete all   Queue#clear: the queue's list goes, and its name leaves the queues set
//	RQ        delete all   Queue.empty: each id leaves the list, its job hash and its
//	                       :dependents set are deleted (RQ's own script, one id at a time)
//	asynq     delete all   Inspector.DeleteAllPendingTasks: each id leaves pending, its hash is
//	                       deleted (asynq leaves the unique lock, and so does hourglass)
//	          archive all  Inspector.ArchiveAllPendingTasks: each id into archived scored now
//	                       (seconds), its hash's state archived, the set trimmed as asynq trims
//	                       it (older than 90 days, beyond 10000 tasks)
//	Celery    delete all   kombu's queue_purge: each of the queue's priority lists deleted, in
//	                       turn (celery_bulk.go)
//	hourglass delete all   a list queue's waiting list emptied, element by element
//
// The libraries' own actions take the whole list in one call; hourglass takes it in chunks from
// the end the library's workers take from (Sidekiq's and Celery's BRPOP, asynq's RPOPLPUSH and a
// list queue's BLMOVE take the tail; RQ's BLPOP the head), the oldest first. Producers and workers
// go on meanwhile, so a chunk acts only on the elements it read and recorded: in its script it
// finds them still at that end (those a worker took since are counted gone, and a few elements
// pushed back onto that end since, as Sidekiq's and asynq's shutdown requeue does, are kept
// there), and acts on nothing when the list changed in the middle of them (left, with the reason).
// A run acts on none of the elements pushed since the dry run: each window is read up to the first
// of the dry run's newest elements (BulkPlan.Newest) still in the list, found from the far end
// (bulk_list_window.lua), and once none of them is left, neither is any element of the dry run,
// and the run ends. (A list whose elements repeat, as a list queue's payloads may, is bounded by
// the values: an element pushed since that equals one of those newest is taken for it.) Each chunk
// records first every element exactly as stored with the DUMP and expiry of each key deleted with
// it, the queues set's member, and for an archive the members asynq's trim could take (UndoListed,
// UndoSetMember); after it, the elements a worker took before it ran (UndoNotDone), so that undo
// does not put back a job that ran.
//
// Undo puts the elements back at the end the workers take from, the last first, so the workers
// take them next, in their old order, before anything pushed since (which is newer): RPUSH for a
// tail-taking library, LPUSH for RQ. The elements an interrupted undo put back already are found
// at that end first (backAlready), and those of a chunk that never ran where they were
// (listUndoState.args), so nothing is put back twice.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var (
	bulkList       = luaScript("bulk_list")
	bulkListWindow = luaScript("bulk_list_window")
)

// ListMarks is how many of a list's newest elements a dry run notes to bound its run.
const ListMarks = 16

// Undo kinds of list sections (bulk_list.go).
const (
	UndoListed    = "e" // an element deleted or archived from a list: back at the end its workers take from
	UndoSetMember = "a" // a member removed from a set (Sidekiq's queues): SADD it back
	UndoNotDone   = "x" // the element of the record before it was gone when its chunk ran: not undone
)

// listOp is a bulk action on a list.
type listOp struct {
	key      string                     // the list
	fromLeft bool                       // the library's workers take from the head (RQ); else the tail
	keys     func(elem string) []string // the whole keys deleted with an element (archive: its hash)
	registry string                     // a set the queue is named in, which it leaves once empty
	member   string                     // its name there
	archived string                     // archive: the set the elements go to ("" for a delete)
	check    func(ctx context.Context, rdb redis.UniversalClient) error
}

func (l *listOp) end() string {
	if l.fromLeft {
		return "left"
	}
	return "right"
}

// plan reads the list's length and newest elements in one step, and its bytes.
func (l *listOp) plan(ctx context.Context, rdb redis.Cmdable, keysEach, keysPerSecond int) (BulkPlan, error) {
	start, stop := int64(0), int64(ListMarks-1) // the head, for a list taken from the tail
	if l.fromLeft {
		start, stop = -ListMarks, -1
	}
	pipe := rdb.TxPipeline()
	n := pipe.LLen(ctx, l.key)
	newest := pipe.LRange(ctx, l.key, start, stop)
	if _, err := pipe.Exec(ctx); err != nil {
		return BulkPlan{}, pageError(err, l.key, n)
	}
	plan := BulkPlan{Tasks: n.Val(), Bytes: -1, KeysEach: keysEach, Estimate: -1}
	if v := newest.Val(); len(v) > 0 {
		plan.Newest = v
	}
	if keysPerSecond > 0 {
		plan.Estimate = time.Duration(float64(plan.Tasks*int64(keysEach)) / float64(keysPerSecond) * float64(time.Second))
	}
	switch mem, err := rdb.MemoryUsage(ctx, l.key, 5).Result(); {
	case plan.Tasks == 0:
		plan.Bytes, plan.BytesNote = 0, "the list is empty"
	case err != nil:
		plan.BytesNote = "unknown: " + store.Reply(err).Error()
	default:
		plan.Bytes, plan.BytesNote = mem, "MEMORY USAGE of "+store.QuoteName(l.key)+", sampled"
	}
	return plan, nil
}

// run does the action chunk by chunk from the taking end, on the plan's elements alone.
func (l *listOp) run(ctx context.Context, rdb redis.UniversalClient, op bulkOp, now time.Time, opt BulkOptions, sizer *chunkSizer) (BulkResult, error) {
	if opt.Match != nil {
		return BulkResult{}, fmt.Errorf("store: a filter's selection of a list section is acted on one task at a time: %w", ErrNotSupported)
	}
	newest, planned := opt.Newest, opt.Limit
	if newest == nil || planned <= 0 {
		p, err := l.plan(ctx, rdb, op.keysEach, 0)
		if err != nil {
			return BulkResult{}, err
		}
		newest, planned = cmpOr(newest, p.Newest), cmp0(planned, p.Tasks)
	}
	res := BulkResult{Planned: planned}
	start, hint := time.Now(), int64(0)
	for last := false; !last && res.Done+res.Gone+res.Left < res.Planned; {
		if ctx.Err() != nil {
			res.Stopped = true
			return res, nil
		}
		n := int(min(int64(sizer.size), res.Planned-res.Done-res.Gone-res.Left))
		var els []string
		var err error
		if els, last, err = l.marked(ctx, rdb, res.Left, n, newest, &hint); opt.faults.ride(ctx, err, "reading the list", opt, &res) {
			last = false
			continue
		} else if err != nil {
			return res, err
		}
		if len(els) == 0 {
			break
		}
		sent, rtt, err := l.chunk(ctx, rdb, op.keysEach, els, now.Add(time.Since(start)), opt, &res)
		if sent == 0 && opt.faults.ride(ctx, err, "reading the chunk", opt, &res) {
			last = false
			continue // nothing was sent: its elements are read again
		}
		if err != nil || res.Stopped {
			return res, err
		}
		sizer.took(sent, rtt)
		if opt.Progress != nil {
			opt.Progress(res)
		}
	}
	// The plan's elements never read: the workers took them between chunks.
	res.Gone += max(res.Planned-res.Done-res.Gone-res.Left, 0)
	return res, nil
}

func cmpOr(a, b []string) []string {
	if a != nil {
		return a
	}
	return b
}

func cmp0(a, b int64) int64 {
	if a > 0 {
		return a
	}
	return b
}

// marked reads n elements of the dry run from the taking end, past the skip left there, in the
// order the workers take them, up to the first of the marks (the dry run's newest elements)
// found from the far end, looked for from the far index hint (bulk_list_window.lua), which it
// moves to where it found one. last: the window reached it, or none is left.
func (l *listOp) marked(ctx context.Context, rdb redis.UniversalClient, skip int64, n int, marks []string, hint *int64) ([]string, bool, error) {
	if len(marks) == 0 {
		return l.window(ctx, rdb, skip, n)
	}
	args := []any{l.end(), skip, n, 0}
	for _, m := range marks {
		args = append(args, m)
	}
	for ctx.Err() == nil {
		args[3] = *hint
		r, err := bulkListWindow.Run(ctx, rdb, []string{l.key}, args...).Slice()
		if err != nil {
			return nil, false, actFail(rdb, "bulk list window script (EVALSHA)", l.key, err)
		}
		if len(r) == 0 || len(r) < 2 && r[0] != "gone" || len(r) < 3 && r[0] == "found" {
			return nil, false, fmt.Errorf("store: bulk list window script on %s: reply %v is not one it gives", l.key, r)
		}
		switch status, _ := r[0].(string); status {
		case "more":
			*hint, _ = r[1].(int64)
		case "found":
			*hint, _ = r[1].(int64)
			raw, _ := r[2].([]any)
			els := make([]string, 0, len(raw))
			for _, e := range raw {
				s, _ := e.(string)
				els = append(els, s)
			}
			return els, len(els) < n, nil
		default:
			return nil, true, nil // every mark is gone, and with them the dry run's elements
		}
	}
	return nil, false, ctx.Err()
}

// window reads n elements from the taking end, past the skip left there, in the order the
// workers take them (last: the list ended).
func (l *listOp) window(ctx context.Context, rdb redis.UniversalClient, skip int64, n int) ([]string, bool, error) {
	start, stop := skip, skip+int64(n)-1
	if !l.fromLeft {
		start, stop = -(skip + int64(n)), -(skip + 1)
	}
	els, err := rdb.LRange(ctx, l.key, start, stop).Result()
	if err != nil {
		return nil, false, actFail(rdb, "LRANGE", l.key, err)
	}
	if !l.fromLeft {
		slices.Reverse(els)
	}
	return els, len(els) < n, nil
}

// chunk records, runs and counts one chunk of elements.
func (l *listOp) chunk(ctx context.Context, rdb redis.UniversalClient, keysEach int, els []string, now time.Time, opt BulkOptions, res *BulkResult) (int, time.Duration, error) {
	if l.check != nil {
		if err := l.check(ctx, rdb); err != nil {
			return 0, 0, err
		}
	}
	keys, args, undo, err := l.call(ctx, rdb, els, now)
	if err != nil {
		return 0, 0, err
	}
	if opt.Wait != nil {
		if err := opt.Wait(ctx, len(els)*keysEach); err != nil {
			res.Stopped = true
			return 0, 0, nil
		}
	}
	if opt.Record != nil {
		if err := opt.Record(undo); err != nil {
			return 0, 0, fmt.Errorf("store: bulk action stopped before a chunk of %d tasks: recording what undoes it: %w", len(els), err)
		}
	}
	flags, rtt, resent, err := callChunk(ctx, rdb, bulkList, keys, args, opt, res)
	if err != nil {
		return 0, 0, actFail(rdb, "bulk list script (EVALSHA)", l.key, err)
	}
	var notDone []UndoTask
	for i, f := range flags {
		switch f {
		case 1:
			res.Done++
			continue
		case 2:
			res.Left++
			if res.Refused == "" {
				res.Refused = "the list changed among them since they were read; left as they are"
			}
		default:
			res.Gone++
		}
		notDone = append(notDone, UndoTask{Kind: UndoNotDone, Key: l.key, Member: els[i]})
	}
	// Sent again after a lost reply, the elements the first send took read as gone: which of them
	// a worker took is not known, so none is recorded as not done (an undo puts them all back).
	if len(notDone) > 0 && opt.Record != nil && !resent {
		if err := opt.Record(notDone); err != nil {
			return 0, 0, fmt.Errorf("store: bulk action stopped: recording the %d tasks its last chunk found gone, which an undo would now put back: %w", len(notDone), err)
		}
	}
	return len(els), rtt, nil
}

// call builds one chunk's call to bulk_list.lua and what undoes it, reading the DUMP and expiry
// of the keys deleted with the elements, the queues set's member and the members a trim could
// take.
func (l *listOp) call(ctx context.Context, rdb redis.UniversalClient, els []string, now time.Time) ([]string, []any, []UndoTask, error) {
	verb, other, cutoff := "delete", l.key, now.AddDate(0, 0, -asynqArchivedDays).Unix()
	if l.archived != "" {
		verb, other = "archive", l.archived
	} else if l.registry != "" {
		other = l.registry
	}
	keys := []string{l.key, other}
	args := []any{verb, l.end(), l.member, now.Unix(), cutoff, asynqMaxArchive}
	var all []string
	for _, e := range els {
		all = append(all, l.keys(e)...)
	}
	dumps, err := dumpUndoKeys(ctx, rdb, l.key, all)
	if err != nil {
		return nil, nil, nil, err
	}
	var undo []UndoTask
	if l.archived != "" {
		if undo, err = setTrimmed(ctx, rdb, l.archived, strconv.FormatInt(cutoff, 10), len(els), asynqMaxArchive); err != nil {
			return nil, nil, nil, err
		}
	}
	if l.registry != "" {
		in, err := rdb.SIsMember(ctx, l.registry, l.member).Result()
		if err != nil {
			return nil, nil, nil, actFail(rdb, "SISMEMBER", l.registry, err)
		}
		if in {
			undo = append(undo, UndoTask{Kind: UndoSetMember, Key: l.registry, Member: l.member})
		}
	}
	for _, e := range els {
		u := UndoTask{Kind: UndoListed, Key: l.key, Member: e, State: l.end(), List: l.archived}
		ks := l.keys(e)
		args = append(args, e, len(ks))
		for _, k := range ks {
			keys = append(keys, k)
			args = append(args, len(keys))
			d, ok := dumps[k]
			if !ok {
				d = UndoTask{Kind: UndoKey, Key: k}
			}
			u.Keys = append(u.Keys, d)
		}
		if l.archived != "" {
			u.Hash, u.NewState = ks[0], "archived"
		}
		undo = append(undo, u)
	}
	return keys, args, undo, nil
}

// listUndo drops from tasks each UndoListed record an UndoNotDone after it cancels, and the
// UndoNotDone records.
func listUndo(tasks []UndoTask) []UndoTask {
	cancelled := map[int]bool{}
	open := map[[2]string][]int{}
	for i, u := range tasks {
		k := [2]string{u.Key, u.Member}
		switch u.Kind {
		case UndoListed:
			open[k] = append(open[k], i)
		case UndoNotDone:
			if o := open[k]; len(o) > 0 {
				cancelled[o[len(o)-1]], open[k] = true, o[:len(o)-1]
			}
		}
	}
	var kept []UndoTask
	for i, u := range tasks {
		if u.Kind != UndoNotDone && !cancelled[i] {
			kept = append(kept, u)
		}
	}
	return kept
}

// backAlready drops from tasks (in undo order) the list elements an undo interrupted before put
// back already: it put the first of a list's elements back first and each next one above it, so
// when that one is found near the taking end (read in pages of MaxTaskPage, charged to wait, as
// far as the list's elements go), the elements above it that follow the records in their order
// are back. (So is a chunk that never ran, whose elements are still there.) It returns the rest
// and how many it dropped.
func backAlready(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, wait func(context.Context, int) error) ([]UndoTask, int64, error) {
	byList := map[string][]int{}
	for i, u := range tasks {
		if u.Kind == UndoListed {
			byList[u.Key] = append(byList[u.Key], i)
		}
	}
	drop := map[int]bool{}
	for list, idx := range byList {
		first := tasks[idx[0]]
		l := &listOp{key: list, fromLeft: first.State == "left"}
		var above []string
		for skip := int64(0); skip < int64(len(idx))+16; skip += MaxTaskPage {
			if wait != nil {
				if err := wait(ctx, 1); err != nil {
					return nil, 0, err
				}
			}
			els, last, err := l.window(ctx, rdb, skip, MaxTaskPage)
			if err != nil {
				return nil, 0, err
			}
			if i := slices.Index(els, first.Member); i >= 0 {
				above = append(above, els[:i+1]...)
				break
			}
			above = append(above, els...)
			if last {
				above = nil
				break
			}
		}
		if !slices.Contains(above, first.Member) {
			continue
		}
		// Put back last first, they lie from the first one up: as many as follow the records.
		slices.Reverse(above)
		for k, i := range idx {
			if k >= len(above) || above[k] != tasks[i].Member {
				break
			}
			drop[i] = true
		}
	}
	var kept []UndoTask
	for i, u := range tasks {
		if !drop[i] {
			kept = append(kept, u)
		}
	}
	return kept, int64(len(drop)), nil
}

// listUndoState counts, per list, the elements an undo has sent back so far.
type listUndoState struct {
	sent map[string]int
	same map[[2]string]int
}

// args are the undo script's arguments for an UndoListed record. A chunk that never ran (its
// record written, its script not run) left its elements where they were, at the taking end then,
// under those put back since: so each of a list's first BulkChunkMax elements is looked for that
// far (scan) from the taking end, as its rank-th occurrence (1 plus the same elements put back
// before it), and found there is left.
func (s *listUndoState) args(u UndoTask, at func(string) int) []any {
	if s.sent == nil {
		s.sent, s.same = map[string]int{}, map[[2]string]int{}
	}
	s.sent[u.Key]++
	k := [2]string{u.Key, u.Member}
	s.same[k]++
	rank, scan := s.same[k], 0
	if n := s.sent[u.Key]; n <= BulkChunkMax {
		scan = n + BulkChunkMax + 16
	}
	if u.State == "right" {
		rank = -rank
	}
	dest, hash := 0, 0
	if u.List != "" {
		dest = at(u.List)
	}
	if u.Hash != "" {
		hash = at(u.Hash)
	}
	args := []any{UndoListed, at(u.Key), u.Member, rank, scan, dest, hash, u.NewState, len(u.Keys)}
	for _, k := range u.Keys {
		args = append(args, at(k.Key), k.Dump, k.ExpireAt)
	}
	return args
}
