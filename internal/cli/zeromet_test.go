package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// seriesField finds the JSON object and field a limiter's or a job queue's series exports; ok is
// false for a series of neither.
func seriesField(doc map[string]any, s series) (obj map[string]any, field string, ok bool) {
	l := s.labels
	switch s.name {
	case "hourglass_unclaimed_keys", "hourglass_unclaimed_bytes":
		unclaimed, _ := doc["unclaimed"].(map[string]any)
		return unclaimed, s.name[len("hourglass_unclaimed_"):], true
	case "hourglass_sweep_duration_seconds":
		scan, _ := doc["scan"].(map[string]any)
		return scan, "duration_ms", true
	case "hourglass_limiter_keys":
		field = map[string]string{"at_limit": "at_limit", "over_limit": "over_limit", "unknown_layout": "unknown", "under_limit": "keys"}[l["state"]]
		return find(list(doc, "limiters"), "name", l["limiter"]), field, true
	case "hourglass_limiter_hits", "hourglass_limiter_refused", "hourglass_limiter_hour_decisions":
		field = map[string]string{"hourglass_limiter_hits": "hits", "hourglass_limiter_refused": "refused_in_window"}[s.name]
		if field == "" {
			field = l["outcome"] // allowed, rejected
		}
		return find(list(doc, "limiters"), "name", l["limiter"]), field, true
	case "hourglass_job_workers":
		workers, _ := find(list(doc, "job_queues"), "name", l["entry"])["workers"].(map[string]any)
		return workers, l["state"], true
	case "hourglass_job_queue_jobs", "hourglass_job_queue_due", "hourglass_job_queue_lag_seconds", "hourglass_job_queue_latency_seconds":
		field = map[string]string{"hourglass_job_queue_due": "due", "hourglass_job_queue_lag_seconds": "oldest_due_age_ms",
			"hourglass_job_queue_latency_seconds": "latency_ms"}[s.name]
		if field == "" {
			field = l["state"] // waiting, active, scheduled, retry, dead, completed: the JSON's names
		}
		entry := find(list(doc, "job_queues"), "name", l["entry"])
		if l["queue"] == "_all" {
			shared, _ := entry["shared"].(map[string]any)
			return shared, field, true
		}
		queues, _ := entry["queues"].([]any)
		return find(queues, "queue", l["queue"]), field, true
	case "hourglass_job_processed_total", "hourglass_job_failed_total":
		queue := l["queue"]
		if queue == "_all" {
			queue = ""
		}
		return throughputRow(doc, l["entry"], queue), strings.TrimPrefix(s.name, "hourglass_job_"), true
	}
	return nil, "", false
}

// zeroSeriesOK are the series of these configs whose 0 is not a figure of a limiter or a job
// queue, with why the data makes it 0.
var zeroSeriesOK = map[string]string{
	"hourglass_redis_ops_per_second":            "Redis' own instantaneous_ops_per_sec: an idle server's is 0",
	"hourglass_last_complete_sweep_age_seconds": "the sweep has just completed",
	// The server's health: redistest starts its servers with no maxmemory, no replica and no
	// AOF, and the JSON's server says the same (serverZero).
	"hourglass_redis_maxmemory_bytes":            "no maxmemory: 0 is no limit",
	"hourglass_redis_evicted_keys_total":         "with no maxmemory nothing is evicted",
	"hourglass_redis_evicted_keys_per_second":    "with no maxmemory nothing is evicted",
	"hourglass_redis_expired_keys_total":         "the fixtures' keys outlive the test",
	"hourglass_redis_expired_keys_per_second":    "the fixtures' keys outlive the test",
	"hourglass_redis_rejected_connections_total": "the test connects far below maxclients",
	"hourglass_redis_replicas":                   "the test server has no replica",
	"hourglass_redis_aof_enabled":                "redistest starts its servers with --appendonly no",
	"hourglass_eviction_risk":                    "the policy is noeviction: nothing is at risk",
}

// checkMetrics scrapes `serve`: a series of a limiter's or a job queue's figure exists only
// where the JSON holds the figure, and is 0 only where the JSON's is; any other series at 0 must
// be one the data makes 0.
func checkMetrics(t *testing.T, c zeroCase, doc map[string]any) {
	ready := "hourglass_limiter_hits"
	if len(list(doc, "job_queues")) > 0 {
		ready = "hourglass_job_queue_jobs"
	}
	for _, s := range scrapeServe(t, c.path, ready) {
		where := fmt.Sprintf("%s: metrics %s%v", c.name, s.name, s.labels)
		obj, field, ok := seriesField(doc, s)
		switch {
		case !ok && s.value == 0 && zeroSeriesOK[s.name] == "":
			t.Errorf("%s is 0, and no figure of the JSON accounts for it", where)
		case !ok:
		case obj == nil:
			t.Errorf("%s: no such row in the JSON", where)
		case obj[field] == nil:
			t.Errorf("%s: a series for %s, which the JSON has null (not kept)", where, field)
		case s.value == 0 && !zeroInJSON(obj, field, s):
			t.Errorf("%s is 0 where the JSON's %s is %v", where, field, obj[field])
		}
	}
}

// zeroInJSON reports whether the JSON holds the 0 a series exports; for a limiter's keys under
// their limit, whether all its keys are at or over it.
func zeroInJSON(obj map[string]any, field string, s series) bool {
	n := func(f string) int64 {
		v, _ := obj[f].(json.Number)
		i, _ := v.Int64()
		return i
	}
	if s.labels["state"] == "under_limit" {
		return n("keys") == n("at_limit")+n("over_limit")
	}
	v, isNum := obj[field].(json.Number)
	return isNum && v.String() == "0"
}
