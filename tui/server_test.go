package tui

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// withRisk is testStatus with its server's policy allkeys-lru while Sidekiq's and BullMQ's queues
// hold jobs.
func withRisk(st snapshot.Status) snapshot.Status {
	st.Server.Nodes[0].Policy = "allkeys-lru"
	st.Server.Eviction = &snapshot.EvictionRisk{Policy: "allkeys-lru", Nodes: []string{"10.0.0.5:6379"}, Scope: "any key",
		AtRisk:       []snapshot.KeysAtRisk{{Kind: "job_queue", Name: "sk", Layout: "sidekiq", Count: 14, Unit: "jobs"}, {Kind: "job_queue", Name: "bq", Layout: "bullmq", Count: 17, Unit: "jobs"}},
		Requirements: []snapshot.Requirement{{Who: "Sidekiq", Brief: "Sidekiq recommends noeviction"}, {Who: "BullMQ", Brief: "BullMQ requires noeviction"}}}
	return st
}

// A policy that can evict while job queues hold jobs: the header names the policy (shortened on a
// narrow terminal, never dropped), and the Server panel names it, the keys at risk and each
// library's requirement, before the unclaimed keys' groups.
func TestServerPanelWarnsOfEviction(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		header string
		panel  []string
	}{
		{160, 48, "allkeys-lru: 2 entries at risk of eviction", []string{"allkeys-lru can evict any key: sk (14 jobs), bq (17 jobs)", "Sidekiq recommends noeviction · BullMQ requires noeviction", "maxmemory-policy allkeys-lru"}},
		{80, 24, "allkeys-lru evicts!", []string{"Server  allkeys-lru can evict any key"}},
	} {
		m := newTestModel(t, &fakeSource{status: withRisk(testStatus(t))}, nil, c.w, c.h)
		poll(t, m)
		lines := strings.Split(screen(m), "\n")
		if !strings.Contains(lines[1], c.header) {
			t.Errorf("%dx%d: the header lacks %q: %q", c.w, c.h, c.header, lines[1])
		}
		for _, want := range c.panel {
			if !strings.Contains(screen(m), want) {
				t.Errorf("%dx%d: the overview lacks %q:\n%s", c.w, c.h, want, screen(m))
			}
		}
	}
}

// A field INFO withheld is "?" with the reason; a rate before a second read says measuring.
func TestServerPanelSaysWhyNotKnown(t *testing.T) {
	st := testStatus(t)
	n := &st.Server.Nodes[0]
	n.MaxMemory, n.Policy, n.EvictedPerSec, n.Fragmentation = nil, "", nil, nil
	why := "not in this server's INFO (a managed Redis may withhold it)"
	n.Unknown = map[string]string{"maxmemory": why, "maxmemory_policy": why, "mem_fragmentation_ratio": why, "evicted_per_sec": "measuring: a rate needs a second INFO read"}
	m := newTestModel(t, &fakeSource{status: st}, nil, 160, 48)
	poll(t, m)
	s := screen(m)
	for _, want := range []string{"memory 1.0 GiB of ? · maxmemory-policy ? · fragmentation ?", "evicted measuring · expired 3.50/s", "?: " + why, "mem 1.0 GiB/?"} {
		if !strings.Contains(s, want) {
			t.Errorf("the overview lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, why) != 1 {
		t.Errorf("the reason is not said once:\n%s", s)
	}
}

// On a cluster the panel has a line a master, the worst first, and the header the worst with the
// count.
func TestServerPanelOfCluster(t *testing.T) {
	st := testStatus(t)
	base := st.Server.Nodes[0]
	full := base
	full.Addr, full.Replicas = "10.0.0.7:6379", nil
	used := int64(3 << 30)
	full.UsedMemory = &used
	other := base
	other.Addr = "10.0.0.9:6379"
	st.Server.Nodes = []snapshot.NodeHealth{base, full, other}
	st.Server.Masters = 3
	m := newTestModel(t, &fakeSource{status: st}, nil, 160, 48)
	poll(t, m)
	lines := strings.Split(screen(m), "\n")
	if !strings.Contains(lines[1], "3 masters, worst 10.0.0.7:6379, no replicas") {
		t.Errorf("header: %q", lines[1])
	}
	var order []string
	for _, l := range lines {
		for _, addr := range []string{"10.0.0.5:6379 ·", "10.0.0.7:6379 ·", "10.0.0.9:6379 ·"} {
			if strings.Contains(l, "│ "+addr) {
				order = append(order, addr)
			}
		}
	}
	if strings.Join(order, " ") != "10.0.0.7:6379 · 10.0.0.5:6379 · 10.0.0.9:6379 ·" {
		t.Errorf("the masters' lines: %v\n%s", order, screen(m))
	}
}

// On a screen too short for the whole panel, the panel keeps to the lines it is given, the risk
// first, and the sweep line below it stays.
func TestServerPanelKeepsToItsHeight(t *testing.T) {
	st := withRisk(testStatus(t))
	st.Snapshot.Warnings = nil
	for _, h := range []int{24, 25, 26, 27} {
		m := newTestModel(t, &fakeSource{status: st}, nil, 80, h)
		poll(t, m)
		s := screen(m)
		if !strings.Contains(s, "allkeys-lru can evict any key") || !strings.Contains(s, "last sweep:") {
			t.Errorf("80x%d: the risk or the sweep line is cut:\n%s", h, s)
		}
	}
}
