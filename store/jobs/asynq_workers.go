package jobs

// asynq's record of its servers (v0.26, as its heartbeater writes it and Inspector.Servers reads
// it):
//
//	asynq:servers                       zset    "asynq:servers:{<host>:<pid>:<server id>}" of
//	                                            each server, scored by when its record expires
//	                                            (Unix seconds: the beat's time plus twice the
//	                                            heartbeat interval, 10 s by default)
//	asynq:servers:{<host>:<pid>:<id>}   string  the server's ServerInfo, protobuf: host (1), pid
//	                                            (2), server_id (3), concurrency (4), queues (5,
//	                                            map name -> priority), strict_priority (6),
//	                                            status (7), start_time (8, Timestamp),
//	                                            active_worker_count (9); it expires with the score
//	asynq:workers, asynq:workers:{...}  zset and hash of the tasks each server's workers run
//
// Inspector.Servers lists the members scored now or later (and removes the others); hourglass
// lists every member and marks Stale one whose score is past at the time read, Gone one whose
// record has expired. asynq records when a beat expires, not when it beat: LastBeat is zero.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protowire"
)

func (j asynqJobs) workers(ctx context.Context, rdb redis.UniversalClient, _ []string, now time.Time) (Workers, error) {
	key := j.prefix + ":servers"
	members, err := rdb.ZRangeWithScores(ctx, key, 0, maxWorkers-1).Result()
	if err != nil {
		return Workers{}, errors.New("ZRANGE " + key + ": " + err.Error())
	}
	found := int64(len(members))
	if found >= maxWorkers {
		if found, err = rdb.ZCard(ctx, key).Result(); err != nil {
			return Workers{}, errors.New("ZCARD " + key + ": " + err.Error())
		}
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i], _ = m.Member.(string)
	}
	infos := make([]*redis.StringCmd, len(names))
	if err := chunked(ctx, rdb, names, func(pipe redis.Pipeliner, i int, k string) { infos[i] = pipe.Get(ctx, k) }); err != nil {
		return Workers{}, err
	}
	out := Workers{Found: found, Kept: true, Beats: true, Notes: []string{
		"asynq records when a server's beat expires, not when it beat: the last beat is not known.",
	}}
	for i, m := range members {
		id := strings.TrimSuffix(strings.TrimPrefix(names[i], key+":{"), "}")
		w := newWorker(id)
		w.Expires = time.Unix(int64(m.Score), 0)
		if data, err := infos[i].Result(); err == nil {
			decodeAsynqServer([]byte(data), &w)
		} else {
			w.Gone = true
		}
		// asynq lists a score of now's whole second or later: stale from the next second on
		w.judge(now.Truncate(time.Second).Add(-time.Second), "its record expired (asynq's Inspector drops it)",
			"past its expiry: no heartbeat renewed it")
		out.List = append(out.List, w)
	}
	return out, nil
}

// decodeAsynqServer reads the fields of a ServerInfo that a Worker shows; a field it cannot read
// is left as not recorded.
func decodeAsynqServer(b []byte, w *Worker) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		var v uint64
		var raw []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			raw, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return
		}
		b = b[n:]
		switch num {
		case 1:
			w.Host = string(raw)
		case 2:
			w.PID = int64(int32(v))
		case 4:
			w.Concurrency = int64(int32(v))
		case 5:
			if q := asynqMapKey(raw); q != "" {
				w.Queues = append(w.Queues, q)
				slices.Sort(w.Queues)
			}
		case 7:
			w.State = string(raw)
		case 8:
			w.Started = asynqTimestamp(raw)
		case 9:
			w.Busy = int64(int32(v))
		}
	}
	if w.Busy == Absent && w.Concurrency != Absent {
		w.Busy = 0 // proto3 leaves a zero count out
	}
}

// asynqMapKey is the key (field 1) of one map entry.
func asynqMapKey(b []byte) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			k, _ := protowire.ConsumeBytes(b)
			return string(k)
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

// asynqTimestamp reads a google.protobuf.Timestamp (seconds 1, nanos 2).
func asynqTimestamp(b []byte) time.Time {
	var sec, nsec int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.VarintType {
			return time.Time{}
		}
		v, m := protowire.ConsumeVarint(b[n:])
		if m < 0 {
			return time.Time{}
		}
		b = b[n+m:]
		switch num {
		case 1:
			sec = int64(v)
		case 2:
			nsec = int64(v)
		}
	}
	if sec == 0 && nsec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, nsec)
}
