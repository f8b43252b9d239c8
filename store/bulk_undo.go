package store

// Undoing a bulk action (bulk.go) from what its chunks recorded before they ran.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// UndoResult counts what Undo put back.
type UndoResult struct {
	Restored int64 // put back as they were
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
	var res UndoResult
	if chunk <= 0 {
		chunk = BulkChunkDefault
	}
	sizer := newChunkSizer(chunk, BulkMaxCall)
	tasks = slices.Clone(tasks)
	slices.Reverse(tasks)
	for len(tasks) > 0 {
		n := min(sizer.size, len(tasks))
		if wait != nil {
			if err := wait(ctx, n); err != nil {
				return res, err
			}
		}
		began := time.Now()
		if err := undoChunk(ctx, rdb, tasks[:n], &res); err != nil {
			return res, err
		}
		sizer.took(n, time.Since(began))
		tasks = tasks[n:]
	}
	return res, nil
}

func undoChunk(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, res *UndoResult) error {
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
			return fmt.Errorf("store: undo: unknown kind %q in the record of %s", u.Kind, actQuote(u.Key))
		}
	}
	codes, err := bulkUndo.Run(context.WithoutCancel(ctx), rdb, keys, args...).Int64Slice()
	if err != nil {
		return actFail(rdb, "undo script (EVALSHA)", keys[0], err)
	}
	for _, c := range codes {
		switch c {
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
	return nil
}
