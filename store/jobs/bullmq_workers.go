package jobs

// BullMQ's workers (5.x, as Queue.getWorkers finds them). BullMQ writes no record of a worker:
// each Worker names its blocking connection (CLIENT SETNAME) "<prefix>:<base64(queue)>", or
// "<prefix>:<base64(queue)>:w:<name>" when the Worker has a name, and getWorkers reads CLIENT
// LIST and keeps the connections so named. In a cluster it reads every node's list and keeps
// the node with the most. A worker is listed while its connection is open: there is no beat to
// miss and nothing goes stale; CLIENT LIST's idle= says how long since the connection's last
// command (a worker blocked waiting for a job is idle as long as it waits).

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

func (j bullmqJobs) workers(ctx context.Context, rdb redis.UniversalClient, queues []string, now time.Time) (Workers, error) {
	lists, err := clientLists(ctx, rdb)
	if err != nil {
		return Workers{}, err
	}
	out := Workers{Kept: true, Notes: []string{
		"BullMQ records no heartbeat: a worker is listed while its connection is open (CLIENT LIST), idle since its last command.",
	}}
	for _, q := range queues {
		var best []Worker
		for _, list := range lists {
			if ws := j.queueWorkers(list, q, now); len(ws) > len(best) {
				best = ws // as getWorkers: the node with the most
			}
		}
		for _, w := range best {
			if len(out.List) < maxWorkers {
				out.List = append(out.List, w)
			}
			out.Found++
		}
	}
	return out, nil
}

// clientLists is CLIENT LIST of every master (of the one server when not a cluster).
func clientLists(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	read := func(ctx context.Context, c redis.Cmdable) (string, error) {
		s, err := c.ClientList(ctx).Result()
		if err != nil {
			return "", errors.New("CLIENT LIST: " + err.Error())
		}
		return s, nil
	}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		s, err := read(ctx, rdb)
		return []string{s}, err
	}
	var lists []string
	var mu sync.Mutex // ForEachMaster calls each master on its own goroutine
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		s, err := read(ctx, c)
		mu.Lock()
		defer mu.Unlock()
		lists = append(lists, s)
		return err
	})
	return lists, err
}

// queueWorkers are the connections of one CLIENT LIST named for queue's workers.
func (j bullmqJobs) queueWorkers(list, queue string, now time.Time) []Worker {
	name := j.prefix + ":" + base64.StdEncoding.EncodeToString([]byte(queue))
	var out []Worker
	for line := range strings.SplitSeq(list, "\n") {
		f := clientFields(strings.TrimSpace(line))
		raw := f["name"]
		if raw == "" || (raw != name && !strings.HasPrefix(raw, name+":w:")) {
			continue
		}
		w := newWorker(raw)
		w.Host, w.Queues, w.State = f["addr"], []string{queue}, "connected"
		if idle, err := strconv.ParseInt(f["idle"], 10, 64); err == nil {
			w.Idle = time.Duration(idle) * time.Second
		}
		if age, err := strconv.ParseInt(f["age"], 10, 64); err == nil {
			w.Started = now.Add(-time.Duration(age) * time.Second) // connected age= seconds ago
		}
		out = append(out, w)
	}
	return out
}

// clientFields splits one CLIENT LIST line into its key=value fields, as BullMQ's
// parseClientList does.
func clientFields(line string) map[string]string {
	f := map[string]string{}
	for kv := range strings.SplitSeq(line, " ") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f[k] = v
		}
	}
	return f
}
