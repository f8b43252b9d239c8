package jobs

// Undoing a bulk action (bulk.go) from what its chunks recorded before they ran.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// UndoResult counts what Undo put back.
type UndoResult struct {
	Restored int64 // tasks put back as they were
	Keys     int64 // keys deleted with those tasks (a job's hash, its sets) restored beside them, and set memberships (Sidekiq's queues)
	There    int64 // there already (or their chunk never ran): nothing to do
	Taken    int64 // moved jobs a worker took from the list since: not undone (they ran)
	Conflict int64 // keys there again holding something else: left as they are
	Expired  int64 // keys whose expiry has passed since: not restored
}

// Undo puts back what tasks record, last first (a task moved twice goes back step by step, and
// a member trimmed from a set by a later chunk is back before the earlier chunk's undo looks for
// it), chunk by chunk (one script each, bulk_undo.lua), each task checked against what is there
// now. wait, when not nil, holds it to a keys/s budget.
func Undo(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, chunk int, wait func(ctx context.Context, keys int) error) (UndoResult, error) {
	return UndoWith(ctx, rdb, tasks, UndoOptions{Chunk: chunk, Wait: wait})
}

// UndoOptions tune an undo.
type UndoOptions struct {
	Chunk int                                       // the first chunk's records; BulkChunkDefault when 0
	Wait  func(ctx context.Context, keys int) error // holds it to a keys/s budget; nil: none
	// Done, when not nil, is told after each chunk how many of the records, counted from the
	// last (the order they go back in), are done: put back, or found with nothing to do. An undo
	// stopped part way can go on with the records before those.
	Done func(records int64)
}

// UndoWith is Undo with its options.
func UndoWith(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, opt UndoOptions) (UndoResult, error) {
	var res UndoResult
	chunk, wait := opt.Chunk, opt.Wait
	if chunk <= 0 {
		chunk = BulkChunkDefault
	}
	sizer := newChunkSizer(chunk, BulkMaxCall)
	tasks = slices.Clone(tasks)
	for i := range tasks {
		tasks[i].fromEnd = int64(len(tasks) - i)
	}
	total := int64(len(tasks))
	tasks = listUndo(tasks)
	slices.Reverse(tasks)
	tasks, back, err := backAlready(ctx, rdb, tasks, wait)
	if err != nil {
		return res, err
	}
	res.There += back
	lists := &listUndoState{}
	for len(tasks) > 0 {
		n := min(sizer.size, len(tasks))
		if wait != nil {
			if err := wait(ctx, n); err != nil {
				return res, err
			}
		}
		began := time.Now()
		if err := undoChunk(ctx, rdb, tasks[:n], lists, &res); err != nil {
			return res, err
		}
		sizer.took(n, time.Since(began))
		if opt.Done != nil {
			opt.Done(tasks[n-1].fromEnd)
		}
		tasks = tasks[n:]
	}
	if opt.Done != nil {
		opt.Done(total)
	}
	return res, nil
}

func undoChunk(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, lists *listUndoState, res *UndoResult) error {
	var keys []string
	index := map[string]int{}
	at := func(k string) int {
		if index[k] == 0 {
			keys = append(keys, k)
			index[k] = len(keys)
		}
		return index[k]
	}
	var args []any
	for _, u := range tasks {
		score := strconv.FormatFloat(u.Score, 'g', -1, 64)
		switch u.Kind {
		case UndoMember:
			args = append(args, "z", at(u.Key), u.Member, score)
		case UndoMove:
			args = append(args, "m", at(u.Key), u.Member, score, at(u.List), u.Pushed)
		case UndoScore:
			args = append(args, "r", at(u.Key), u.Member, score, strconv.FormatFloat(u.NewScore, 'g', -1, 64))
		case UndoToList, UndoToSet:
			hash := 0
			if u.Hash != "" {
				hash = at(u.Hash)
			}
			args = append(args, u.Kind, at(u.Key), u.Member, score, at(u.List), hash, u.State, u.NewState)
		case UndoQueued:
			args = append(args, "q", at(u.Key), u.Member, score, at(u.List), len(u.Keys))
			for _, k := range u.Keys {
				args = append(args, at(k.Key), k.Dump, k.ExpireAt)
			}
		case UndoKey:
			args = append(args, "k", at(u.Key), u.Dump, u.ExpireAt)
		case UndoListed:
			args = append(args, lists.args(u, at)...)
		case UndoSetMember:
			args = append(args, UndoSetMember, at(u.Key), u.Member)
		case UndoDependency:
			args = append(args, "p", at(u.Key), u.Member, u.Dump, u.ExpireAt, score)
		case UndoCleaned:
			list := 0
			if u.List != "" {
				list = 1
			}
			args = append(args, "c", at(u.Key), u.Member, score, list, len(u.Keys))
			for _, k := range u.Keys {
				args = append(args, at(k.Key), k.Dump, k.ExpireAt)
			}
		default:
			return fmt.Errorf("store: undo: unknown kind %q in the record of %s", u.Kind, store.QuoteName(u.Key))
		}
	}
	codes, err := bulkUndo.Run(context.WithoutCancel(ctx), rdb, keys, args...).Int64Slice()
	if err != nil {
		return actFail(rdb, "undo script (EVALSHA)", keys[0], err)
	}
	for i, c := range codes {
		switch {
		case c == 1 && besideTask(tasks[i].Kind):
			res.Keys++
		case c == 0 && besideTask(tasks[i].Kind): // there already: its task says what it was
		default:
			res.count(c)
		}
	}
	return nil
}

// besideTask says whether a record kind puts back something deleted beside a task (a key, a set
// membership, a flow parent's dependency) rather than the task itself.
func besideTask(kind string) bool {
	return kind == UndoKey || kind == UndoSetMember || kind == UndoDependency
}

// count counts one task's undo by its code from bulk_undo.lua.
func (res *UndoResult) count(code int64) {
	switch code {
	case 1:
		res.Restored++
	case 0:
		res.There++
	case 2:
		res.Taken++
	case 3:
		res.Conflict++
	default:
		res.Expired++
	}
}

// dumpDeleted reads the DUMP and expiry of the keys deleted with each member (dumpKeys).
func dumpDeleted(ctx context.Context, rdb redis.UniversalClient, op bulkOp, members []string) (map[string]UndoTask, error) {
	var keys []string
	for _, m := range members {
		keys = append(keys, op.keys(m)...)
	}
	return dumpUndoKeys(ctx, rdb, op.key, keys)
}

// dumpUndoKeys reads the DUMP and expiry (PEXPIRETIME, absolute) of keys in one pipeline, each as
// an UndoKey; a key that does not exist is left out. set names the action's set in an error.
func dumpUndoKeys(ctx context.Context, rdb redis.UniversalClient, set string, keys []string) (map[string]UndoTask, error) {
	type read struct {
		dump *redis.StringCmd
		at   *redis.Cmd
	}
	reads := map[string]read{}
	pipe := rdb.Pipeline()
	for _, k := range keys {
		reads[k] = read{pipe.Dump(ctx, k), pipe.Do(ctx, "PEXPIRETIME", k)}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, actFail(rdb, "DUMP", set, err)
	}
	out := map[string]UndoTask{}
	for k, r := range reads {
		d, err := r.dump.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		at, aerr := r.at.Int64()
		if err != nil || aerr != nil {
			return nil, actFail(rdb, "DUMP", k, errors.Join(err, aerr))
		}
		out[k] = UndoTask{Kind: UndoKey, Key: k, Dump: d, ExpireAt: max(at, 0)}
	}
	return out, nil
}
