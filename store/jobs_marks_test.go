package store

import (
	"testing"

	"hourglass/internal/redistest"
)

// TestSidekiqKeyOfReadsWhatSidekiqWrote: every key Sidekiq wrote that SidekiqKeyOf reads as one of
// its marks is under the namespace Sidekiq was given, of the type the mark says, and every mark
// is among them (its per-day counters too); the namespace's reader claims every key.
func TestSidekiqKeyOfReadsWhatSidekiqWrote(t *testing.T) {
	for _, ns := range []string{"", "myapp"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			rdb, _ := sidekiqFixture(t, ns)
			src := JobSource{Layout: Sidekiq, Prefix: ns}
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
// version field is BullMQ's, and BullMQStateKeyOf reads each list and sorted set of the queues' jobs;
// the prefix's reader claims every key.
func TestBullMQQueueKeyOfReadsWhatBullMQWrote(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t)
	const prefix = "{app}:bull"
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "bullmq.mjs", "redis://"+srv.Addr, prefix)
	rdb := srv.Client(t)
	src := JobSource{Layout: BullMQ, Prefix: prefix}
	seen := map[string]map[string]bool{}
	states := 0
	for k := range scanKeys(t, rdb) {
		if _, ok := src.Classify(k); !ok {
			t.Errorf("%s: not claimed by BullMQ's reader under %q", k, prefix)
		}
		for _, st := range bullmqStates {
			for _, q := range []string{"work", "later", "held"} {
				if k == prefix+":"+q+":"+st.suffix {
					if p, got, ok := BullMQStateKeyOf(k); p != prefix || got != q || !ok {
						t.Errorf("%s: read as queue %q under %q (%v)", k, got, p, ok)
					}
					states++
				}
			}
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
	if states < 6 {
		t.Errorf("%d lists and sets of the queues' jobs read, want their wait, paused, delayed, completed…", states)
	}
	for _, q := range []string{"work", "later", "held"} {
		if !seen[q]["meta"] || !seen[q]["events"] || !seen[q]["id"] {
			t.Errorf("queue %s: keys read %v, want its meta, id and events", q, seen[q])
		}
	}
}
