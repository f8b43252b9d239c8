package jobs

// Sidekiq's marks: how its keys are found under any redis-namespace. A namespace is Sidekiq's
// once its queues set (a set when sampled) is seen beside at least one other of its marks that
// Resque, which keeps the same queues set and queue:<name> lists (and stat:processed and
// stat:failed), never writes: a queue:<name> list whose sampled job has Sidekiq's jid, its
// schedule, retry or dead sorted set, its processes set, or its per-day
// stat:processed:<yyyy-mm-dd> / stat:failed:<…> counters (each of the Redis type Sidekiq gives
// it when sampled). A queues set alone, or queue lists alone, is anyone's; a sampled job with
// class and args and no jid is Resque's.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SidekiqMark is which of Sidekiq's keys a name is, read under whatever namespace it has
// (SidekiqKeyOf): what discover finds a namespace by.
type SidekiqMark uint8

// The marks, each with the Redis type Sidekiq gives its keys (SidekiqMark.Type).
const (
	SidekiqRegistry  SidekiqMark = 1 << iota // queues: set
	SidekiqQueueList                         // queue:<name>: list
	SidekiqJobSet                            // schedule, retry, dead: zset
	SidekiqProcesses                         // processes: set
	SidekiqStat                              // stat:processed, stat:failed and their per-day keys: string
)

// Type is the Redis type of the keys of mark.
func (m SidekiqMark) Type() string {
	switch m {
	case SidekiqRegistry, SidekiqProcesses:
		return "set"
	case SidekiqQueueList:
		return "list"
	case SidekiqJobSet:
		return "zset"
	}
	return "string"
}

// SidekiqKeyOf reads key as one of the keys Sidekiq names alike in every app, under any
// redis-namespace: the namespace ("" for none) and which mark it is. A queue's list is read first
// ("<ns>:queue:<name>", the namespace before the first ":queue:"), then the names that end the
// key: queues, processes, schedule, retry, dead, stat:processed, stat:failed, and the per-day
// stat:processed:<yyyy-mm-dd> and stat:failed:<yyyy-mm-dd>.
func SidekiqKeyOf(key string) (ns string, mark SidekiqMark, ok bool) {
	if q, found := strings.CutPrefix(key, "queue:"); found && q != "" {
		return "", SidekiqQueueList, true
	}
	if i := strings.Index(key, ":queue:"); i > 0 && len(key) > i+len(":queue:") {
		return key[:i], SidekiqQueueList, true
	}
	k, day := key, false
	if n := len(k); n > 11 && k[n-11] == ':' && isSidekiqDay(k[n-10:]) {
		k, day = k[:n-11], true
	}
	if k == "" || !strings.ContainsRune("sedy", rune(k[len(k)-1])) { // what the names below end in
		return "", 0, false
	}
	for _, m := range sidekiqMarks {
		if day && m.mark != SidekiqStat {
			continue
		}
		if k == m.name {
			return "", m.mark, true
		}
		if n := len(k) - len(m.name) - 1; n > 0 && k[n] == ':' && k[n+1:] == m.name {
			return k[:n], m.mark, true
		}
	}
	return "", 0, false
}

// sidekiqMarks are the names that end Sidekiq's keys of one mark, under any namespace.
var sidekiqMarks = []struct {
	name string
	mark SidekiqMark
}{{"stat:processed", SidekiqStat}, {"stat:failed", SidekiqStat}, {"queues", SidekiqRegistry},
	{"processes", SidekiqProcesses}, {"schedule", SidekiqJobSet}, {"retry", SidekiqJobSet}, {"dead", SidekiqJobSet}}

// isSidekiqDay reports whether s is a yyyy-mm-dd date, as Sidekiq names its days (asynq too).
func isSidekiqDay(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	return isDigits(s[:4]) && isDigits(s[5:7]) && isDigits(s[8:])
}

// SidekiqPayload says whose a job read from a queue:<name> list is: Sidekiq's (a JSON object
// with a "class" and the "jid" Client.push gives every job) or Resque's (a JSON object with
// "class" and "args" and no "jid", as Resque.push writes it to the same queue:<name> list
// beside the same queues set).
func SidekiqPayload(payload string) (sidekiq, resque bool) {
	var job map[string]json.RawMessage
	if json.Unmarshal([]byte(payload), &job) != nil {
		return false, false
	}
	_, jid := job["jid"]
	_, class := job["class"]
	_, args := job["args"]
	return jid && class, !jid && class && args
}

// IsSidekiqDailyStat reports whether key is one of Sidekiq's per-day counters,
// stat:processed:<yyyy-mm-dd> or stat:failed:<yyyy-mm-dd>, under any namespace: Resque keeps
// stat:processed and stat:failed too, but no day of them.
func IsSidekiqDailyStat(key string) bool {
	_, mark, ok := SidekiqKeyOf(key)
	return ok && mark == SidekiqStat && len(key) > 11 && key[len(key)-11] == ':' && isSidekiqDay(key[len(key)-10:])
}

// sidekiqMarker is Sidekiq's Marks.
type sidekiqMarker struct{}

var _ Marks = sidekiqMarker{}

// sidekiqHeld says why Sidekiq's counters alone are proposed no entry.
const sidekiqHeld = "named as Sidekiq's counters (stat:processed, stat:failed, per day), but Sidekiq's queues set and another of its keys were not seen under that namespace: not proposed as a counter family, which would take them from Sidekiq's entry"

func (sidekiqMarker) Mark(key string) (Mark, bool) {
	ns, mark, ok := SidekiqKeyOf(key)
	if !ok {
		return Mark{}, false
	}
	m := Mark{Prefix: ns, Strong: mark == SidekiqRegistry, Member: mark == SidekiqQueueList}
	if mark == SidekiqStat {
		m.Held = sidekiqHeld
	}
	return m, true
}

func (sidekiqMarker) Named(key string) (string, bool) {
	ns, _, ok := SidekiqKeyOf(key)
	return ns, ok
}

func (sidekiqMarker) Proof(ns string) Proof { return &sidekiqProof{ns: ns} }

// sidekiqProof is what a namespace's keys showed of Sidekiq.
type sidekiqProof struct {
	ns string
	// marks are the kinds of key seen by name, bad those a sample showed of a type Sidekiq never
	// gives them.
	marks, bad SidekiqMark
	// jid says a sampled queue:<name> job had Sidekiq's jid, resque that one was Resque's (no
	// jid), daily that per-day stat counters were seen.
	jid, resque, daily bool
}

func (p *sidekiqProof) Saw(key string) {
	_, mark, _ := SidekiqKeyOf(key)
	p.marks |= mark
	p.daily = p.daily || mark == SidekiqStat && IsSidekiqDailyStat(key)
}

func (p *sidekiqProof) Sampled(s MarkSample) {
	_, mark, _ := SidekiqKeyOf(s.Name)
	switch sidekiq, resque := SidekiqPayload(s.Member); {
	case s.Type != mark.Type():
		p.bad |= mark
	case mark == SidekiqQueueList && sidekiq:
		p.jid = true
	case mark == SidekiqQueueList && resque:
		p.resque = true
	}
}

func (p *sidekiqProof) Strong() bool { return p.marks&SidekiqRegistry != 0 }

func (p *sidekiqProof) Trusted() bool {
	good := p.marks &^ p.bad
	// Marks Resque's keys never have: its queues set and lists, its stat totals are alike.
	own := SidekiqJobSet | SidekiqProcesses
	daily := p.daily && good&SidekiqStat != 0
	jid := p.jid && good&SidekiqQueueList != 0
	return good&SidekiqRegistry != 0 && (good&own != 0 || daily || jid)
}

func (p *sidekiqProof) Pending() bool { return false }

func (p *sidekiqProof) Queues() []string { return nil }

func (p *sidekiqProof) Evidence() string {
	where := fmt.Sprintf("under the namespace %q (redis-namespace)", p.ns)
	if p.ns == "" {
		where = "with no namespace"
	}
	line := "named as Sidekiq names its keys " + where + ": " + p.marks.text(p.bad)
	if p.bad != 0 {
		line += "; of another type than Sidekiq's: " + p.bad.text(0)
	}
	if p.jid {
		line += "; a sampled queue's job has Sidekiq's jid"
	}
	if p.resque {
		line += "; a sampled queue's job has class and args and no jid, as Resque pushes its jobs"
	}
	if !p.Trusted() {
		line += "; not trusted: Sidekiq's queues set and one more key Resque does not keep are needed (a queue's job with a jid, the schedule, retry or dead set, the processes set, per-day stat counters)"
	}
	return line
}

// text names the marks in m but those in not.
func (m SidekiqMark) text(not SidekiqMark) string {
	m &^= not
	var parts []string
	for _, x := range []struct {
		m    SidekiqMark
		text string
	}{{SidekiqRegistry, "queues set"}, {SidekiqQueueList, "queue:<name> lists"},
		{SidekiqJobSet, "schedule/retry/dead sets"}, {SidekiqProcesses, "processes set"},
		{SidekiqStat, "stat:processed/failed counters"}} {
		if m&x.m != 0 {
			parts = append(parts, x.text)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
