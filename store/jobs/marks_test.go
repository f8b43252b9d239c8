package jobs

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestSidekiqKeyOfReadsWhatSidekiqWrote: every key Sidekiq wrote that SidekiqKeyOf reads as one of
// its marks is under the namespace Sidekiq was given, of the type the mark says, and every mark
// is among them (its per-day counters too); the namespace's reader claims every key.
func TestSidekiqKeyOfReadsWhatSidekiqWrote(t *testing.T) {
	for _, ns := range []string{"", "myapp"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			rdb, _ := sidekiqFixture(t, ns)
			src := Source{Layout: Sidekiq, Prefix: ns}
			var seen SidekiqMark
			daily := 0
			for k := range scanKeys(t, rdb) {
				if _, ok := src.Classify(k); !ok {
					t.Errorf("%s: not claimed by Sidekiq's reader under %q", k, ns)
				}
				got, mark, ok := SidekiqKeyOf(k)
				if !ok {
					continue
				}
				seen |= mark
				if typ := rdb.Type(t.Context(), k).Val(); got != ns || typ != mark.Type() {
					t.Errorf("%s: read as namespace %q, a %s; Sidekiq wrote it under %q, a %s", k, got, mark.Type(), ns, typ)
				}
				if mark == SidekiqStat && isSidekiqDay(k[len(k)-10:]) {
					daily++
				}
			}
			all := SidekiqRegistry | SidekiqQueueList | SidekiqJobSet | SidekiqProcesses | SidekiqStat
			if seen != all || daily < 2 {
				t.Errorf("marks seen %05b, want %05b; %d per-day counters, want processed and failed", seen, all, daily)
			}
		})
	}
}

// TestBullMQQueueKeyOfReadsWhatBullMQWrote: under a prefix holding ':' and a hash tag, as a
// cluster deployment gives it, BullMQQueueKeyOf reads each queue's meta hash, id counter and events
// stream with the prefix and queue BullMQ was given and the type it wrote, and each meta hash's
// version field is BullMQ's, and BullMQKeyOf reads every key BullMQ keeps for a queue as a whole
// (its jobs' lists and sorted sets, its marker…) with its prefix and queue; the prefix's reader
// claims every key.
func TestBullMQQueueKeyOfReadsWhatBullMQWrote(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t)
	const prefix = "{app}:bull"
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "bullmq.mjs", "redis://"+srv.Addr, prefix)
	rdb := srv.Client(t)
	src := Source{Layout: BullMQ, Prefix: prefix}
	seen := map[string]map[string]bool{}
	queueKeys := map[string]bool{} // "<queue>:<suffix>" of each key BullMQKeyOf read
	for k := range scanKeys(t, rdb) {
		if _, ok := src.Classify(k); !ok {
			t.Errorf("%s: not claimed by BullMQ's reader under %q", k, prefix)
		}
		for _, q := range []string{"work", "later", "held"} {
			rest, under := strings.CutPrefix(k, prefix+":"+q+":")
			// A job is a hash named by its id (the queue's own hash is its meta); the keys
			// beside it are named after it.
			id, _, _ := strings.Cut(rest, ":")
			if !under || id != "meta" && rdb.Type(t.Context(), prefix+":"+q+":"+id).Val() == "hash" {
				continue
			}
			if p, got, ok := BullMQKeyOf(k); p != prefix || got != q || !ok {
				t.Errorf("%s: read as queue %q under %q (%v)", k, got, p, ok)
			}
			queueKeys[q+":"+rest] = true
		}
		p, q, suffix, typ, ok := BullMQQueueKeyOf(k)
		if !ok {
			continue
		}
		if got := rdb.Type(t.Context(), k).Val(); p != prefix || got != typ {
			t.Errorf("%s: read as prefix %q, a %s; BullMQ wrote it under %q, a %s", k, p, typ, prefix, got)
		}
		if seen[q] == nil {
			seen[q] = map[string]bool{}
		}
		seen[q][suffix] = true
		if suffix == "meta" {
			if v := rdb.HGet(t.Context(), k, BullMQMetaField).Val(); !IsBullMQVersion(v) {
				t.Errorf("%s: version field %q is not BullMQ's", k, v)
			}
		}
	}
	for _, k := range []string{"work:wait", "work:active", "work:completed", "work:failed", "work:prioritized", "work:marker",
		"later:delayed", "later:waiting-children", "later:marker", "held:paused", "held:meta"} {
		if !queueKeys[k] {
			t.Errorf("%s not among the queues' keys read: %v", k, queueKeys)
		}
	}
	for _, q := range []string{"work", "later", "held"} {
		if !seen[q]["meta"] || !seen[q]["events"] || !seen[q]["id"] {
			t.Errorf("queue %s: keys read %v, want its meta, id and events", q, seen[q])
		}
	}
}
