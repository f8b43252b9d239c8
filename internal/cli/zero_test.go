package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// A 0 hourglass shows must be a 0 the data makes, never a figure nobody keeps. These tests walk
// the JSON of `snapshot --json` generically (so a field added later is walked too), the text
// report's tables and the metrics, for configs of only limits, only rate-limiter-flexible, only
// redis_rate and only job libraries (Sidekiq and RQ; BullMQ, Celery and asynq), over data those libraries wrote
// themselves; the console's views are walked by the tui's own test of the same data.

// zeroLeaf is a number 0 in a decoded JSON document: its path ("limiters[2].top[0].refused"), its
// shape (the path without indexes: "limiters[].top[].refused") and the objects that hold it,
// outermost first.
type zeroLeaf struct {
	path, shape string
	chain       []map[string]any
}

// zeroLeaves walks a decoded JSON document (json.Number numbers) and returns every 0 in it.
func zeroLeaves(v any, path, shape string, chain []map[string]any, out *[]zeroLeaf) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		chain = append(slices.Clip(chain), x)
		for _, k := range keys {
			zeroLeaves(x[k], join(path, k), join(shape, k), chain, out)
		}
	case []any:
		for i, e := range x {
			zeroLeaves(e, fmt.Sprintf("%s[%d]", path, i), shape+"[]", chain, out)
		}
	case json.Number:
		if f, err := x.Float64(); err == nil && f == 0 {
			*out = append(*out, zeroLeaf{path, shape, chain})
		}
	}
}

// emptyKinds returns the paths of every "kind" that is an empty string.
func emptyKinds(v any, path string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "kind" && s == "" {
				*out = append(*out, join(path, k))
			}
			emptyKinds(e, join(path, k), out)
		}
	case []any:
		for i, e := range x {
			emptyKinds(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func decodeJSON(t *testing.T, text string) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, text)
	}
	return doc
}

// whyZero says why the data makes a 0 of the JSON a 0, or "" when nothing does: a 0 the test
// cannot account for is a figure shown as 0 that may not be.
func (c zeroCase) whyZero(doc map[string]any, z zeroLeaf) string {
	parent := z.chain[len(z.chain)-1]
	field := z.path[strings.LastIndexAny(z.path, ".")+1:]
	switch {
	case z.shape == "scan.duration_ms":
		return "a sweep of a few keys takes under a millisecond"
	case z.shape == "scan.keys_gone":
		return "the libraries' keys outlive the sweep by seconds at least"
	case strings.HasPrefix(z.shape, "server."):
		return serverZero(parent, field)
	case strings.HasPrefix(z.shape, "unclaimed."):
		if jsonInt(doc, "scan", "keys_seen") == jsonInt(doc, "scan", "keys_matched") {
			return "the config claims every key"
		}
	case strings.HasPrefix(z.shape, "ttl_health."):
		if len(list(doc, "counters"))+len(list(doc, "locks")) == 0 {
			return "no counter family or lock is configured: no key of theirs is unhealthy"
		}
	case z.shape == "limiters[].unknown" || z.shape == "limiters[].wrong_type":
		if c.keys >= 0 && sumOf(list(doc, "limiters"), "keys") == c.keys {
			return "the limiters read every key the library wrote"
		}
	case z.shape == "limiters[].refused_in_window_keys":
		if parent["refused_in_window"] == nil {
			return "none of the limiter's keys counts what it refuses"
		}
	case z.shape == "limiters[].top[].remaining" || z.shape == "limiters[].top[].refused":
		return c.limitKeyZero(parent, field)
	case z.shape == "job_queues[].queues[].latency_ms":
		if w, ok := parent["waiting"].(json.Number); ok && w.String() == "0" {
			return "nothing waits in the queue, which the library counts 0"
		}
	case strings.HasPrefix(z.shape, "job_queues[].throughput[]."):
		return c.throughputZero(z)
	case strings.HasPrefix(z.shape, "job_queues[].workers."):
		return workersZero(z)
	case strings.HasPrefix(z.shape, "job_queues[]."):
		return c.jobZero(z)
	}
	return ""
}

// workersZero says whether a job library's workers make a 0: a count of the processes it lists
// (found, live, stale) that matches the list, or a figure of one process its record holds as 0
// (a figure it does not record is null).
func workersZero(z zeroLeaf) string {
	ws := z.chain[2]
	procs, _ := ws["list"].([]any)
	field := z.path[strings.LastIndex(z.path, ".")+1:]
	n := 0
	for _, p := range procs {
		stale, _ := p.(map[string]any)["stale"].(bool)
		if field == "found" || field == "stale" && stale || field == "live" && !stale {
			n++
		}
	}
	switch {
	case strings.Contains(z.shape, ".list[]."):
		return "the process's record holds " + field + " 0"
	case n == 0:
		return fmt.Sprintf("the library lists %d processes, none %s", len(procs), field)
	}
	return ""
}

// limitKeyZero says whether the library answered 0 for a limiter key's remaining or refused.
func (c zeroCase) limitKeyZero(top map[string]any, field string) string {
	f, ok := c.limitKeys[fmt.Sprint(top["key"])]
	switch {
	case !ok:
	case field == "remaining" && f.remaining == 0:
		return "the library answers remaining 0 for the key"
	case field == "refused" && f.refused == 0:
		return "the key's value holds no refused attempt"
	}
	return ""
}

// jobZero says whether the library counted 0 for a job queue's field.
func (c zeroCase) jobZero(z zeroLeaf) string {
	entry := z.chain[1]
	layout := fmt.Sprint(entry["layout"])
	queue, field := "", z.path[strings.LastIndex(z.path, ".")+1:]
	row := z.chain[2]
	if strings.Contains(z.shape, ".states.") {
		row, field = z.chain[2], "states."+field
	}
	if strings.Contains(z.shape, ".queues[].") {
		queue = fmt.Sprint(row["queue"])
	}
	if field == "oldest_due_age_ms" { // no lag where nothing is due
		field = "due"
	}
	if n, ok := c.jobCount(layout, queue, field); ok && anyZero(n) {
		return fmt.Sprintf("%s counts %v", layout, n)
	}
	return ""
}

// throughputZero says whether the library counted 0 for a figure of the jobs it ran: a running
// total, or a day's count ("throughput.<field>", "throughput.day.<yyyy-mm-dd>.<field>").
func (c zeroCase) throughputZero(z zeroLeaf) string {
	layout, queue := fmt.Sprint(z.chain[1]["layout"]), fmt.Sprint(z.chain[2]["queue"])
	field := "throughput." + z.path[strings.LastIndex(z.path, ".")+1:]
	if strings.Contains(z.shape, ".days[].") {
		field = "throughput.day." + fmt.Sprint(z.chain[3]["day"]) + "." + z.path[strings.LastIndex(z.path, ".")+1:]
	}
	if n, ok := c.jobCount(layout, queue, field); ok && anyZero(n) {
		return fmt.Sprintf("%s counts %v", layout, n)
	}
	return ""
}

func jsonInt(doc map[string]any, path ...string) int64 {
	var v any = doc
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return i
}

func list(doc map[string]any, key string) []any {
	l, _ := doc[key].([]any)
	return l
}

func sumOf(items []any, key string) int64 {
	var s int64
	for _, it := range items {
		m, _ := it.(map[string]any)
		n, _ := m[key].(json.Number)
		i, _ := n.Int64()
		s += i
	}
	return s
}

// TestNoZeroThatIsNotKnown: every 0 in the JSON of each config is one the libraries' own
// answers make 0, and no "kind" is empty; the text report and the metrics show a 0 only where
// the JSON holds one (so the JSON's check covers theirs), and have "—" or no series where it
// holds null.
func TestNoZeroThatIsNotKnown(t *testing.T) {
	for _, c := range zeroCases(t) {
		code, out, errOut := hg(t, "snapshot", "--json", "--config", c.path)
		if code != exitOK {
			t.Fatalf("%s: snapshot --json exit %d: %s", c.name, code, errOut)
		}
		doc := decodeJSON(t, out)
		var zs []zeroLeaf
		zeroLeaves(doc, "", "", nil, &zs)
		for _, z := range zs {
			if why := c.whyZero(doc, z); why == "" {
				t.Errorf("%s: %s is 0, and the data does not make it 0", c.name, z.path)
			}
		}
		var kinds []string
		emptyKinds(doc, "", &kinds)
		for _, k := range kinds {
			t.Errorf("%s: %s is empty", c.name, k)
		}
		checkReport(t, c, doc)
		checkMetrics(t, c, doc)
	}
}

// serverZero says why the test servers make a figure of INFO's 0: redistest starts them with no
// maxmemory, no replica and no AOF, and the tests connect far below maxclients.
func serverZero(parent map[string]any, field string) string {
	switch field {
	case "maxmemory":
		return "redistest sets no maxmemory: 0 is no limit"
	case "evicted_keys", "evicted_per_sec":
		if m, ok := parent["maxmemory"].(json.Number); ok && m.String() == "0" {
			return "with no maxmemory nothing is evicted"
		}
	case "expired_keys", "expired_per_sec":
		return "INFO's count since the server started: the fixtures' keys outlive the test"
	case "rejected_connections":
		return "the test connects far below maxclients"
	case "ops_per_sec":
		return "Redis' own instantaneous_ops_per_sec: an idle server's is 0"
	}
	return ""
}
