package snapshot

import (
	"testing"

	"github.com/hourglass-dev/hourglass/internal/discover"
)

func TestNewEvictionRisk(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	node := func(policy string, maxmemory int64) NodeHealth {
		return NodeHealth{Addr: "10.0.0.5:6379", Role: "master", Policy: policy, MaxMemory: i64(maxmemory)}
	}
	queues := &Snapshot{DelayQueues: []DelayQueue{{Name: "topics", Depth: 2, InFlight: i64(1)}, {Name: "topics", Depth: 4}, {Name: "gone", Missing: true}},
		Locks: []Lock{{Name: "jobs", Held: 2}, {Name: "idle"}}}
	unclaimed := &Snapshot{Unclaimed: discover.Result{Groups: []discover.Group{
		{Pattern: "… (sidekiq)", Kind: discover.KindJobQueue, Keys: 11, Entry: &discover.Entry{Layout: "sidekiq"}},
		{Pattern: "session:<uuid>", Kind: discover.KindOther, Keys: 900}}}}
	withheld := node("", 0)
	withheld.MaxMemory, withheld.Unknown = nil, map[string]string{"maxmemory_policy": "not in INFO"}
	for _, c := range []struct {
		name   string
		nodes  []NodeHealth
		snap   *Snapshot
		policy string
		scope  string
		noLim  bool
		atRisk []KeysAtRisk
		who    []string
	}{
		{name: "noeviction", nodes: []NodeHealth{node("noeviction", 1<<30)}, snap: queues},
		{name: "nothing at risk", nodes: []NodeHealth{node("allkeys-lru", 1<<30)}, snap: &Snapshot{}},
		{name: "no sweep yet", nodes: []NodeHealth{node("allkeys-lru", 1<<30)}},
		{name: "our queues and locks", nodes: []NodeHealth{node("allkeys-lfu", 1<<30)}, snap: queues, policy: "allkeys-lfu", scope: "any key",
			atRisk: []KeysAtRisk{{Kind: "delay_queue", Name: "topics", Count: 7, Unit: "tasks"}, {Kind: "lock", Name: "jobs", Count: 2, Unit: "locks held"}}, who: []string{"hourglass"}},
		{name: "volatile, no limit", nodes: []NodeHealth{node("volatile-lru", 0)}, snap: queues, policy: "volatile-lru", scope: "keys with a TTL", noLim: true,
			atRisk: []KeysAtRisk{{Kind: "delay_queue", Name: "topics", Count: 7, Unit: "tasks"}, {Kind: "lock", Name: "jobs", Count: 2, Unit: "locks held"}}, who: []string{"hourglass"}},
		{name: "keys no entry claims yet", nodes: []NodeHealth{node("allkeys-lru", 1<<30)}, snap: unclaimed, policy: "allkeys-lru", scope: "any key",
			atRisk: []KeysAtRisk{{Kind: "job_queue", Name: "… (sidekiq)", Count: 11, Unit: "keys no entry claims"}}, who: []string{"Sidekiq"}},
		{name: "policy withheld", nodes: []NodeHealth{withheld}, snap: queues,
			atRisk: []KeysAtRisk{{Kind: "delay_queue", Name: "topics", Count: 7, Unit: "tasks"}, {Kind: "lock", Name: "jobs", Count: 2, Unit: "locks held"}}, who: []string{"hourglass"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewEvictionRisk(c.nodes, c.snap)
			if c.atRisk == nil {
				if r != nil {
					t.Fatalf("a risk: %+v", r)
				}
				return
			}
			if r == nil || r.Policy != c.policy || r.Scope != c.scope || r.NoLimit != c.noLim || len(r.Nodes) != 1 {
				t.Fatalf("risk %+v", r)
			}
			if c.policy == "" && r.Unknown != "not in INFO" {
				t.Errorf("unknown: %q", r.Unknown)
			}
			if len(r.AtRisk) != len(c.atRisk) {
				t.Fatalf("at risk %+v, want %+v", r.AtRisk, c.atRisk)
			}
			for i := range c.atRisk {
				if r.AtRisk[i] != c.atRisk[i] {
					t.Errorf("at risk %d: %+v, want %+v", i, r.AtRisk[i], c.atRisk[i])
				}
			}
			var who []string
			for _, q := range r.Requirements {
				who = append(who, q.Who)
			}
			if len(who) != len(c.who) || (len(who) > 0 && who[0] != c.who[0]) {
				t.Errorf("requirements of %v, want %v", who, c.who)
			}
		})
	}
}
