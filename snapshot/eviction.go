package snapshot

import (
	"slices"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// EvictionRisk says that Redis may evict keys that must not go: a job library's queues, our
// queues or locks are present while a node's maxmemory-policy can evict (or is not known).
type EvictionRisk struct {
	// Policy is the policies that can evict, joined by ", "; "" when no node's is known.
	Policy string `json:"policy"`
	// Nodes are the nodes with such a policy, or whose policy is not known.
	Nodes []string `json:"nodes"`
	// Scope is what the policy evicts: "any key" (allkeys-*) or "keys with a TTL" (volatile-*).
	Scope string `json:"scope"`
	// NoLimit is set when maxmemory is 0 on each such node: nothing is evicted until a limit is
	// set, which CONFIG SET does at any time.
	NoLimit bool `json:"no_limit"`
	// Unknown says why a node's policy is not known ("" when each is).
	Unknown      string        `json:"unknown,omitempty"`
	AtRisk       []KeysAtRisk  `json:"at_risk"`
	Requirements []Requirement `json:"requirements"`
}

// KeysAtRisk is one entry whose keys a policy that evicts may take.
type KeysAtRisk struct {
	// Kind is job_queue, delay_queue, list_queue or lock. Name is the entry's, or for keys no
	// entry claims, their pattern.
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Layout string `json:"layout,omitempty"` // a job queue's library
	// Count is what the keys hold: jobs (waiting, active, scheduled, retry and dead, as the
	// queues view counts them), tasks (queued and in flight), locks held, or for keys no entry
	// claims, the keys. Unit names it.
	Count int64  `json:"count"`
	Unit  string `json:"unit"`
}

// Requirement is what a library asks of maxmemory-policy, in its own words, and where it says so.
type Requirement struct {
	Who    string `json:"who"`
	Brief  string `json:"brief"`
	Says   string `json:"says"`
	Source string `json:"source"`
}

// ownNeed is our own queues' and locks' requirement (docs/production.md says why).
var ownNeed = Requirement{Who: "hourglass", Brief: "hourglass's queues and locks need noeviction",
	Says:   "an evicted delay or list queue loses its tasks, and an evicted lock lets a second holder in",
	Source: "docs/production.md#noeviction"}

// NewEvictionRisk is the risk nodes' policies put on what s holds; nil when no node can evict,
// or s holds nothing at risk (s nil: not known yet).
func NewEvictionRisk(nodes []NodeHealth, s *Snapshot) *EvictionRisk {
	if s == nil {
		return nil
	}
	var r EvictionRisk
	var policies []string
	limited := false
	for _, n := range nodes {
		switch {
		case n.Policy == "":
			r.Nodes = append(r.Nodes, n.Addr)
			r.Unknown = n.Why("maxmemory_policy")
		case Evicts(n.Policy):
			r.Nodes = append(r.Nodes, n.Addr)
			if !slices.Contains(policies, n.Policy) {
				policies = append(policies, n.Policy)
			}
			limited = limited || n.MaxMemory == nil || *n.MaxMemory > 0
		}
	}
	if len(r.Nodes) == 0 {
		return nil
	}
	r.AtRisk, r.Requirements = atRisk(s)
	if len(r.AtRisk) == 0 {
		return nil
	}
	r.Policy, r.NoLimit = strings.Join(policies, ", "), len(policies) > 0 && !limited
	r.Scope = scopeOf(policies)
	return &r
}

// scopeOf says which keys policies evict.
func scopeOf(policies []string) string {
	for _, p := range policies {
		if strings.HasPrefix(p, "allkeys-") {
			return "any key"
		}
	}
	if len(policies) > 0 {
		return "keys with a TTL"
	}
	return ""
}

// atRisk lists what s holds that must not be evicted, and the requirements of those who wrote it:
// each job library's once, then ours.
func atRisk(s *Snapshot) ([]KeysAtRisk, []Requirement) {
	var keys []KeysAtRisk
	var reqs []Requirement
	own := false
	for i := range s.JobQueues {
		e := &s.JobQueues[i]
		if e.QueuesFound == 0 && e.Shared == nil {
			continue
		}
		keys = append(keys, KeysAtRisk{Kind: "job_queue", Name: e.Name, Layout: e.Layout, Count: jobsHeld(e), Unit: "jobs"})
		reqs = withNeed(reqs, e.Layout)
	}
	for _, q := range s.DelayQueues {
		if !q.Missing {
			n := q.Depth
			if q.InFlight != nil {
				n += *q.InFlight
			}
			keys, own = append(keys, KeysAtRisk{Kind: "delay_queue", Name: q.Name, Count: n, Unit: "tasks"}), true
		}
	}
	for _, q := range s.ListQueues {
		if !q.Missing {
			n := q.Length
			if q.Processing != nil {
				n += *q.Processing
			}
			keys, own = append(keys, KeysAtRisk{Kind: "list_queue", Name: q.Name, Count: n, Unit: "tasks"}), true
		}
	}
	for _, l := range s.Locks {
		if l.Held > 0 {
			keys, own = append(keys, KeysAtRisk{Kind: "lock", Name: l.Name, Count: l.Held, Unit: "locks held"}), true
		}
	}
	keys, reqs, own = unclaimedAtRisk(s.Unclaimed.Groups, keys, reqs, own)
	if own {
		reqs = append(reqs, ownNeed)
	}
	return merged(keys), reqs
}

// unclaimedAtRisk adds the groups of keys no entry claims that look like queues or locks: until
// an entry claims them (one inferred waits for the next sweep), they are at risk too.
func unclaimedAtRisk(groups []discover.Group, keys []KeysAtRisk, reqs []Requirement, own bool) ([]KeysAtRisk, []Requirement, bool) {
	for _, g := range groups {
		switch g.Kind {
		case discover.KindJobQueue:
			if g.Entry != nil {
				reqs = withNeed(reqs, g.Entry.Layout)
			}
		case discover.KindDelayQueue, discover.KindListQueue, discover.KindLock:
			own = true
		default:
			continue
		}
		keys = append(keys, KeysAtRisk{Kind: string(g.Kind), Name: discover.Printable(g.Pattern), Count: g.Keys, Unit: "keys no entry claims"})
	}
	return keys, reqs, own
}

// withNeed adds layout's requirement to reqs, once.
func withNeed(reqs []Requirement, layout string) []Requirement {
	need, ok := jobs.Layout(layout).EvictionNeed()
	if !ok || slices.ContainsFunc(reqs, func(r Requirement) bool { return r.Who == need.Who }) {
		return reqs
	}
	return append(reqs, Requirement{Who: need.Who, Brief: need.Brief, Says: need.Says, Source: need.Source})
}

// merged adds up the rows of one entry: a queue given by a pattern has a row a key.
func merged(keys []KeysAtRisk) []KeysAtRisk {
	var out []KeysAtRisk
	for _, k := range keys {
		i := slices.IndexFunc(out, func(o KeysAtRisk) bool { return o.Kind == k.Kind && o.Name == k.Name })
		if i < 0 {
			out = append(out, k)
			continue
		}
		out[i].Count = addSat(out[i].Count, k.Count)
	}
	return out
}

// jobsHeld is the jobs an entry holds that are not done: waiting, active, scheduled, retry and
// dead.
func jobsHeld(e *JobQueues) int64 {
	t := e.Totals()
	var n int64
	for _, p := range []*int64{t.Waiting, t.Active, t.Scheduled, t.Retry, t.Dead} {
		if p != nil {
			n = addSat(n, *p)
		}
	}
	return n
}
