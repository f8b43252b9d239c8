package jobs

// Sidekiq's actions on one job, as its API does them (Sidekiq 6.4, the Web UI's buttons):
//
//	delete a waiting job        JobRecord#delete: LREM queue:<name> 1 <entry>
//	delete a scheduled, retry   SortedEntry#delete: ZREM <set> <entry> (delete_by_value)
//	  or dead job
//	run a scheduled job now     SortedEntry#add_to_queue: the entry leaves the schedule set and
//	                            goes through Sidekiq::Client#push
//	run a retry or dead job     SortedEntry#retry: the same, with retry_count counted back one
//	  now                       first (the Web UI's "Retry Now"), so the retry is not counted
//
// Client#push normalizes the job before it pushes it: the default options fill a missing
// "retry" (true) and "queue" ("default"), a missing jid or created_at is made, and enqueued_at is
// now; then SADD queues <name> and LPUSH queue:<name> <job>. hourglass makes the same job from
// the entry (each value kept exactly as stored, the keys in sorted order) and moves it in one
// script (sidekiq_enqueue.lua), so the entry leaves its set only when the job reaches its queue.
// Sidekiq's client middleware, which runs in the app's own process, is not run. A job Sidekiq's
// push would refuse (no class or args, no queue, an "at" that would schedule it again) is refused
// before anything is written, where Sidekiq would have removed the entry first and then failed.
//
// Sidekiq keeps a running job in its process's memory (the process's workers hash is a report,
// not a queue): there is no in-flight job in Redis to return or delete.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var sidekiqEnqueue = luaScript("sidekiq_enqueue")

// sidekiqSets are the sorted sets Sidekiq keeps for all queues, by the section they are listed in.
var sidekiqSets = map[TaskSection]string{SectionLater: "schedule", SectionRetry: "retry", SectionDead: "dead"}

func (j sidekiqJobs) act(ctx context.Context, rdb redis.UniversalClient, queue string, sec TaskSection, t Task, a TaskAction, now time.Time) (string, error) {
	set, isSet := sidekiqSets[sec]
	switch {
	case sec == SectionInFlight:
		return "", actRefusal("Sidekiq", sec, a, "Sidekiq keeps a running job in its process's memory, not in Redis")
	case a == ActionDelete && sec == SectionWaiting:
		key := j.key("queue:" + queue)
		n, err := rdb.LRem(ctx, key, 1, t.Member).Result()
		switch {
		case err != nil:
			return "", actFail(rdb, "LREM", key, err)
		case n == 0:
			return "", actGone("delete", t, key)
		}
		return fmt.Sprintf("job %s deleted from %s", sidekiqJobName(t), store.QuoteName(key)), nil
	case a == ActionDelete && isSet:
		return actZRem(ctx, rdb, j.key(set), t)
	case a == ActionRunNow && isSet:
		return j.actEnqueue(ctx, rdb, set, t, now)
	case a == ActionRunNow && sec == SectionWaiting:
		return "", actRefusal("Sidekiq", sec, a, "a waiting job runs when a process takes it: Sidekiq keeps no due time for it")
	}
	return "", actRefusal("Sidekiq", sec, a, "Sidekiq has no such action there")
}

// actEnqueue moves one job of a sorted set to its queue, as add_to_queue (the schedule set) and
// retry (the retry and dead sets) do.
func (j sidekiqJobs) actEnqueue(ctx context.Context, rdb redis.UniversalClient, set string, t Task, now time.Time) (string, error) {
	job, queue, err := sidekiqPushed(t.Member, set != "schedule", now)
	if err != nil {
		return "", fmt.Errorf("store: run %s now: %w", sidekiqJobName(t), err)
	}
	key := j.key(set)
	n, err := sidekiqEnqueue.Run(ctx, rdb, []string{key, j.key("queues"), j.key("queue:" + queue)}, t.Member, job, queue).Int64()
	switch {
	case err != nil:
		return "", actFail(rdb, "Sidekiq enqueue script (EVALSHA)", key, err)
	case n == 0:
		return "", actGone("run", t, key)
	}
	return fmt.Sprintf("job %s of Sidekiq's %s set is in queue %s now", sidekiqJobName(t), set, store.QuoteName(queue)), nil
}

// sidekiqPushed is the job Sidekiq::Client#push would push for an entry of a sorted set (retry:
// with retry_count counted back one, as SortedEntry#retry does), and its queue.
func sidekiqPushed(entry string, retry bool, now time.Time) (string, string, error) {
	var job map[string]json.RawMessage
	if err := json.Unmarshal([]byte(entry), &job); err != nil || job == nil {
		return "", "", fmt.Errorf("not a Sidekiq job (its entry is not a JSON object)")
	}
	var class string
	var args []json.RawMessage
	if json.Unmarshal(job["class"], &class) != nil || string(job["class"]) == "null" || job["args"] == nil || json.Unmarshal(job["args"], &args) != nil || args == nil {
		return "", "", fmt.Errorf("not a Sidekiq job: Sidekiq pushes only a job with a class name and an args array")
	}
	if _, ok := job["at"]; ok {
		return "", "", fmt.Errorf("the job carries an \"at\": Sidekiq's push would schedule it again, not queue it")
	}
	setDefault := func(k, v string) {
		if s := string(job[k]); s == "" || s == "null" || s == "false" { // Ruby's ||=
			job[k] = json.RawMessage(v)
		}
	}
	if _, ok := job["retry"]; !ok {
		job["retry"] = json.RawMessage("true")
	}
	if _, ok := job["queue"]; !ok {
		job["queue"] = json.RawMessage(`"default"`)
	}
	var queue string
	if json.Unmarshal(job["queue"], &queue) != nil || queue == "" {
		return "", "", fmt.Errorf("the job names no queue (%s): Sidekiq refuses to push it", job["queue"])
	}
	var jid [12]byte
	_, _ = rand.Read(jid[:])
	secs := strconv.FormatFloat(float64(now.UnixMicro())/1e6, 'f', -1, 64)
	setDefault("jid", strconv.Quote(hex.EncodeToString(jid[:])))
	setDefault("created_at", secs)
	job["enqueued_at"] = json.RawMessage(secs)
	if rc := string(job["retry_count"]); retry && rc != "" && rc != "null" && rc != "false" {
		n, err := strconv.ParseInt(rc, 10, 64)
		if err != nil {
			return "", "", fmt.Errorf("its retry_count %s is not an integer to count back", rc)
		}
		job["retry_count"] = json.RawMessage(strconv.FormatInt(n-1, 10))
	}
	out, err := encodeJSON(job)
	return out, queue, err
}

// encodeJSON writes v as compact JSON without escaping <, > and & (what Ruby's and Python's
// encoders leave as they are); values held as json.RawMessage are written as they were read.
func encodeJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// sidekiqJobName names a job by its jid and class, read from its entry; by the entry when those
// cannot be read.
func sidekiqJobName(t Task) string {
	var job struct {
		JID   string `json:"jid"`
		Class string `json:"class"`
	}
	if t.ID != "" || json.Unmarshal([]byte(t.Member), &job) != nil || job.JID == "" {
		return actName(t)
	}
	return store.QuoteName(job.JID) + " (" + store.QuoteName(job.Class) + ")"
}
