package discover

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// Three job libraries put their keys under a prefix of the user's choosing: Sidekiq under
// redis-namespace's namespace ("<ns>:queue:<name>", or bare names with none), BullMQ under its
// prefix option ("<prefix>:<queue>:wait", "bull" by default) and Celery under kombu's
// global_keyprefix ("<prefix>_kombu.binding.<exchange>", the prefix holding its own separator).
// Their keys are found under any prefix by the names each library gives its keys alike in every
// app (jobs.SidekiqKeyOf, jobs.BullMQQueueKeyOf, jobs.CeleryBindingOf), and a prefix is the
// library's only once the evidence holds:
//
//   - Sidekiq: its queues set (a set when sampled) and at least one other of its marks that
//     Resque, which keeps the same queues set and queue:<name> lists (and stat:processed and
//     stat:failed), never writes: a queue:<name> list whose sampled job has Sidekiq's jid, its
//     schedule, retry or dead sorted set, its processes set, or its per-day
//     stat:processed:<yyyy-mm-dd> / stat:failed:<…> counters (each of the Redis type Sidekiq
//     gives it when sampled). A queues set alone, or queue lists alone, is anyone's; a sampled
//     job with class and args and no jid is Resque's.
//   - BullMQ (under a prefix other than "bull", whose keys are BullMQ's by name as before): a
//     queue's meta hash (<prefix>:<queue>:meta) whose version field BullMQ's Queue wrote
//     ("bullmq:<version>"), read from the sampled hash. A meta hash, id counter and events
//     stream by name alone are an event-sourced app's as well.
//   - Celery (under a global_keyprefix; with none its keys are Celery's by name as before): an
//     exchange's binding set (<prefix>_kombu.binding.<exchange>) one of whose members, read from
//     the sampled set, is as kombu writes a binding ("<routing key>\x06\x16<pattern>\x06\x16<queue>").
//
// Keys met before their prefix was trusted are in shapes; the Result folds each shape whose
// examples the library claims into the library's group. A prefix holding an all-digit segment
// is an id, not a prefix, and at most maxCandidates prefixes a library are followed.

// maxCandidates bounds the prefixes followed per library.
const maxCandidates = 64

// The keys BullMQ keeps once per queue, as a candidate's marks.
const (
	bullMeta uint8 = 1 << iota
	bullID
	bullEvents
)

var bullBits = map[string]uint8{"meta": bullMeta, "id": bullID, "events": bullEvents}

// celeryBinding is Celery's one mark: an exchange's binding set.
const celeryBinding uint8 = 1

// strongMarks are the marks that start a prefix's evidence, by library: Sidekiq's queues set, a
// BullMQ meta hash, a kombu binding set.
var strongMarks = map[jobs.Layout]uint8{jobs.Sidekiq: uint8(jobs.SidekiqRegistry), jobs.BullMQ: bullMeta, jobs.Celery: celeryBinding}

// candidate is a prefix under which a library's marks were seen.
type candidate struct {
	lib *Library // the library under the prefix; lib.cand is this candidate
	// marks are the kinds of key seen by name (jobs.SidekiqMark bits, or bullMeta… for BullMQ),
	// bad those a sample showed of a type the library never gives them.
	marks, bad uint8
	version    string // BullMQ: a meta hash's version field naming BullMQ
	kombu      bool   // Celery: a sampled binding set's member is as kombu writes it
	// Sidekiq: jid says a sampled queue:<name> job had Sidekiq's jid, resque that one was
	// Resque's (no jid), daily that per-day stat counters were seen.
	jid, resque, daily bool
	confirmed          bool // trusted once: its keys are routed to its group since
	// markRead is set once a sample of its deciding mark (BullMQ's meta hash, a kombu binding
	// set) has been read, whatever it showed.
	markRead bool
	// queues are, for Celery, the task exchanges its bindings named, whose queues' lists are
	// named after them (Celery's default), up to maxDistinct.
	queues []string
}

// learning is what Groups found of prefixes: the candidates, and the trusted ones' libraries,
// longest prefix first, which claim names as they are added.
type learning struct {
	cands  map[string]*candidate // by layout and prefix
	per    map[jobs.Layout]int
	routes []*Library
}

func candKey(l jobs.Layout, prefix string) string { return string(l) + "\x00" + prefix }

// learn notes name as a mark of a library under its prefix. g.mu is held.
func (g *Groups) learn(name string) {
	if ns, mark, ok := jobs.SidekiqKeyOf(name); ok {
		if c := g.candidate(jobs.Sidekiq, ns, mark == jobs.SidekiqRegistry); c != nil {
			c.marks |= uint8(mark)
			c.daily = c.daily || mark == jobs.SidekiqStat && jobs.IsSidekiqDailyStat(name)
			g.check(c)
		}
	}
	if p, _, suffix, _, ok := jobs.BullMQQueueKeyOf(name); ok && p != jobs.BullMQ.DefaultPrefix() {
		if c := g.candidate(jobs.BullMQ, p, suffix == "meta"); c != nil {
			c.marks |= bullBits[suffix]
			g.check(c)
		}
	}
	if p, ex, task, ok := jobs.CeleryBindingOf(name); ok && p != "" {
		if c := g.candidate(jobs.Celery, p, true); c != nil {
			c.marks |= celeryBinding
			if task && len(c.queues) < maxDistinct && !slices.Contains(c.queues, ex) {
				c.queues = append(c.queues, strings.Clone(ex))
			}
			g.check(c)
		}
	}
}

// learnSample notes the type (and a BullMQ meta hash's version) a sample of a mark showed, for
// a prefix already followed. g.mu is held.
func (g *Groups) learnSample(s Sample) {
	if s.Type == "" || s.Type == "none" {
		return
	}
	if ns, mark, ok := jobs.SidekiqKeyOf(s.Name); ok {
		if c := g.learnt.cands[candKey(jobs.Sidekiq, ns)]; c != nil {
			switch sidekiq, resque := jobs.SidekiqPayload(s.Member); {
			case s.Type != mark.Type():
				c.bad |= uint8(mark)
			case mark == jobs.SidekiqQueueList && sidekiq && !c.jid:
				c.jid = true
				g.check(c)
			case mark == jobs.SidekiqQueueList && resque:
				c.resque = true
			}
		}
	}
	if p, _, suffix, typ, ok := jobs.BullMQQueueKeyOf(s.Name); ok {
		if c := g.learnt.cands[candKey(jobs.BullMQ, p)]; c != nil {
			c.markRead = c.markRead || suffix == "meta"
			if s.Type != typ {
				c.bad |= bullBits[suffix]
			} else if suffix == "meta" && jobs.IsBullMQVersion(s.Field) && c.version == "" {
				c.version = strings.Clone(s.Field)
				g.check(c)
			}
		}
	}
	if p, _, _, ok := jobs.CeleryBindingOf(s.Name); ok {
		if c := g.learnt.cands[candKey(jobs.Celery, p)]; c != nil {
			c.markRead = true
			if s.Type != "set" {
				c.bad |= celeryBinding
			} else if jobs.IsKombuBinding(s.Member) && !c.kombu {
				c.kombu = true
				g.check(c)
			}
		}
	}
}

// candidate returns the candidate of layout under prefix, made if there is room: strong says the
// name is one that starts a prefix's evidence (Sidekiq's queues set, a BullMQ meta hash), which
// may take the place of a candidate that has none. g.mu is held.
func (g *Groups) candidate(l jobs.Layout, prefix string, strong bool) *candidate {
	k := candKey(l, prefix)
	if c := g.learnt.cands[k]; c != nil {
		return c
	}
	if !plausiblePrefix(prefix) {
		return nil
	}
	if g.learnt.cands == nil {
		g.learnt.cands, g.learnt.per = map[string]*candidate{}, map[jobs.Layout]int{}
	}
	if g.learnt.per[l] >= maxCandidates {
		if !strong || !g.evictWeak(l) {
			return nil
		}
	}
	c := &candidate{}
	c.lib = &Library{Name: string(l), Job: l, source: jobs.Source{Layout: l, Prefix: strings.Clone(prefix)}, cand: c}
	g.learnt.cands[k] = c
	g.learnt.per[l]++
	return c
}

// evictWeak drops a candidate of l not trusted and with no strong mark, if there is one.
func (g *Groups) evictWeak(l jobs.Layout) bool {
	strong := strongMarks[l]
	for k, c := range g.learnt.cands {
		if c.lib.Job == l && !c.confirmed && c.marks&strong == 0 {
			delete(g.learnt.cands, k)
			g.learnt.per[l]--
			return true
		}
	}
	return false
}

// plausiblePrefix reports whether p can be a prefix a user chose: not too long, and no segment
// of it all digits (an id: user:42:meta is a user's, not a queue's under "user:42").
func plausiblePrefix(p string) bool {
	if len(p) > 100 {
		return false
	}
	for _, seg := range strings.Split(p, ":") {
		if seg != "" && strings.Trim(seg, "0123456789") == "" {
			return false
		}
	}
	return true
}

// check routes c's names to its group once the evidence holds. g.mu is held.
func (g *Groups) check(c *candidate) {
	if c.confirmed || !c.trusted() {
		return
	}
	c.confirmed = true
	g.learnt.routes = append(g.learnt.routes, c.lib)
	sort.SliceStable(g.learnt.routes, func(i, j int) bool {
		return len(g.learnt.routes[i].source.Prefix) > len(g.learnt.routes[j].source.Prefix)
	})
}

// trusted reports whether the evidence holds (see the rules above).
func (c *candidate) trusted() bool {
	good := c.marks &^ c.bad
	if c.lib.Job == jobs.Sidekiq {
		// Marks Resque's keys never have: its queues set and lists, its stat totals are alike.
		own := uint8(jobs.SidekiqJobSet | jobs.SidekiqProcesses)
		daily := c.daily && good&uint8(jobs.SidekiqStat) != 0
		jid := c.jid && good&uint8(jobs.SidekiqQueueList) != 0
		return good&uint8(jobs.SidekiqRegistry) != 0 && (good&own != 0 || daily || jid)
	}
	if c.lib.Job == jobs.Celery {
		return c.kombu && c.bad&celeryBinding == 0
	}
	return c.version != "" && c.bad&bullMeta == 0
}

// routed returns the trusted prefix's library that claims name, if any, and whether name is
// where it registers its queues. g.mu is held.
func (g *Groups) routed(name string) (*Library, bool) {
	for _, l := range g.learnt.routes {
		if !underPrefix(l, name) {
			continue
		}
		if k, ok := l.source.Classify(name); ok {
			return l, k.Registry
		}
	}
	return nil, false
}

// underPrefix reports whether name is under l's prefix: "<prefix>:…", or for Celery, whose
// global_keyprefix holds its own separator, "<prefix>…".
func underPrefix(l *Library, name string) bool {
	p := l.source.Prefix
	if p == "" || l.Job == jobs.Celery {
		return strings.HasPrefix(name, p)
	}
	return len(name) > len(p) && name[len(p)] == ':' && name[:len(p)] == p
}

// learntShapes are fresh groups of the trusted prefixes no name was routed to yet, whose keys
// are all in shapes the Result folds in. g.mu is held.
func (g *Groups) learntShapes() []*shape {
	var out []*shape
	for _, l := range g.learnt.routes {
		if g.libs[l.key()] == nil {
			out = append(out, &shape{lib: l, derived: true})
		}
	}
	return out
}

// evidence says what the candidate's prefix rests on, and why it is not trusted when it is not.
func (c *candidate) evidence() []string {
	p := c.lib.source.Prefix
	if c.lib.Job == jobs.Sidekiq {
		where := fmt.Sprintf("under the namespace %q (redis-namespace)", p)
		if p == "" {
			where = "with no namespace"
		}
		line := "named as Sidekiq names its keys " + where + ": " + sidekiqMarksText(c.marks&^c.bad)
		if c.bad != 0 {
			line += "; of another type than Sidekiq's: " + sidekiqMarksText(c.bad)
		}
		if c.jid {
			line += "; a sampled queue's job has Sidekiq's jid"
		}
		if c.resque {
			line += "; a sampled queue's job has class and args and no jid, as Resque pushes its jobs"
		}
		if !c.trusted() {
			line += "; not trusted: Sidekiq's queues set and one more key Resque does not keep are needed (a queue's job with a jid, the schedule, retry or dead set, the processes set, per-day stat counters)"
		}
		return []string{line}
	}
	if c.lib.Job == jobs.Celery {
		return []string{c.celeryEvidence()}
	}
	line := fmt.Sprintf("BullMQ's keys under the prefix %q", p)
	if c.trusted() {
		line += fmt.Sprintf(": a queue's meta hash says %s (its version field)", c.version)
	} else {
		line += ": not trusted: no sampled meta hash has BullMQ's version field"
	}
	return []string{line}
}

// celeryEvidence says what a Celery prefix rests on.
func (c *candidate) celeryEvidence() string {
	line := fmt.Sprintf("kombu's exchange bindings under the global_keyprefix %q", c.lib.source.Prefix)
	switch {
	case c.bad&celeryBinding != 0:
		return line + ": not trusted: a key named as a binding is not a set"
	case c.kombu:
		return line + ": a sampled binding set's member is as kombu writes one (routing key, pattern, queue)"
	}
	return line + ": not trusted: no sampled binding set has a member as kombu writes one"
}

// sidekiqMarksText names the marks in m.
func sidekiqMarksText(m uint8) string {
	var parts []string
	for _, x := range []struct {
		m    jobs.SidekiqMark
		text string
	}{{jobs.SidekiqRegistry, "queues set"}, {jobs.SidekiqQueueList, "queue:<name> lists"},
		{jobs.SidekiqJobSet, "schedule/retry/dead sets"}, {jobs.SidekiqProcesses, "processes set"},
		{jobs.SidekiqStat, "stat:processed/failed counters"}} {
		if m&uint8(x.m) != 0 {
			parts = append(parts, x.text)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// libraryCounters reports whether every example of sh is one of a library's counters (Sidekiq's
// stat:processed:<date> and the like) whose library was not found: such keys are not proposed as
// a counter family, which would claim them before the library's entry could.
func libraryCounters(sh *shape) bool {
	for _, ex := range sh.examples {
		if _, mark, ok := jobs.SidekiqKeyOf(ex); !ok || mark != jobs.SidekiqStat {
			return false
		}
	}
	return len(sh.examples) > 0
}

// MemberRead reports whether the sweep reads one member of the sampled set, or the first
// element of the sampled list, named name into Sample.Member: a kombu binding set's under a
// global_keyprefix (Celery's mark), a job of a list named as Sidekiq's queue:<name> (whose jid
// tells Sidekiq's from Resque's).
func MemberRead(name string) bool {
	if p, _, _, ok := jobs.CeleryBindingOf(name); ok && p != "" {
		return true
	}
	_, mark, ok := jobs.SidekiqKeyOf(name)
	return ok && mark == jobs.SidekiqQueueList
}

// maxMarkReads bounds the marks sampled past their shapes' sampling in one sweep.
const maxMarkReads = 256

// markWanted reports whether name is a library's mark (BullMQ's meta hash, a kombu binding set,
// a Sidekiq queue list: what a read of trusts a prefix) under a prefix whose evidence is not in
// yet. Such a key is sampled whatever its shape's sampling takes, so whether a prefix is trusted
// in a sweep does not hang on which of its keys a sample happens to read. g.mu is held.
func (g *Groups) markWanted(name string) bool {
	if g.markReads >= maxMarkReads || markField(name) == "" && !MemberRead(name) {
		return false
	}
	var c *candidate
	if p, _, _, _, ok := jobs.BullMQQueueKeyOf(name); ok {
		c = g.learnt.cands[candKey(jobs.BullMQ, p)]
	} else if p, _, _, ok := jobs.CeleryBindingOf(name); ok {
		c = g.learnt.cands[candKey(jobs.Celery, p)]
	} else if ns, _, ok := jobs.SidekiqKeyOf(name); ok {
		c = g.learnt.cands[candKey(jobs.Sidekiq, ns)]
	}
	if c == nil || c.trusted() {
		return false
	}
	g.markReads++
	return true
}

// HashField is the field of a sampled hash named name whose value the sweep reads into
// Sample.Field: a BullMQ meta hash's version (jobs.BullMQMetaField); for other hashes, the
// field by which hourglass's Bloom filters' metadata is known (store.BloomLayoutField).
func HashField(name string) string {
	if f := markField(name); f != "" {
		return f
	}
	return store.BloomLayoutField
}

// markField is the field of a library's mark among hashes (BullMQ's meta hash's version), or "".
func markField(name string) string {
	if _, _, suffix, _, ok := jobs.BullMQQueueKeyOf(name); ok && suffix == "meta" {
		return jobs.BullMQMetaField
	}
	return ""
}

// heldCounters is a group of a library's counters whose library was not found: no entry.
func heldCounters(gr Group) Group {
	gr.Kind, gr.Confidence, gr.Entry = KindUndecided, Low, nil
	gr.Evidence = append(gr.Evidence, "named as Sidekiq's counters (stat:processed, stat:failed, per day), but Sidekiq's queues set and another of its keys were not seen under that namespace: not proposed as a counter family, which would take them from Sidekiq's entry")
	return gr
}

// libraryPattern is how a library's group is named: its prefix and the library.
func libraryPattern(l *Library) string {
	p := l.source.Prefix
	if p != "" && l.Job != jobs.Celery { // kombu's global_keyprefix holds its own separator
		p += ":"
	}
	return p + "… (" + l.Name + ")"
}

// nameWords spells a prefix as an entry name's words: letters and digits, "_" between runs.
func nameWords(p string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(p) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	if s := strings.Trim(b.String(), "_"); s != "" {
		return s
	}
	return "prefix"
}

// mayBeLibrary reports whether every example of sh is named as a key Sidekiq, BullMQ or Celery keeps,
// under some prefix (a queue's list or sorted set, a mark; for BullMQ any key it keeps for a
// queue as a whole, its marker sorted set among them, which a group of a queue's sorted sets
// holds beside its delayed set): until the sweep has seen every key, their library's marks may
// still come, and with them the library's entry, which the keys are.
func mayBeLibrary(sh *shape) bool {
	for _, ex := range sh.examples {
		_, _, sk := jobs.SidekiqKeyOf(ex)
		_, _, bq := jobs.BullMQKeyOf(ex)
		_, _, _, cb := jobs.CeleryBindingOf(ex)
		if !sk && !bq && !cb && !jobs.MayBeCelerys(ex) {
			return false
		}
	}
	return len(sh.examples) > 0
}

// markPending reports whether sh's keys are named as a library's under a prefix whose deciding
// mark has been seen by name (BullMQ's meta hash, a kombu binding set) but not read yet: whether
// they are that library's is not known until it is. g.mu is held.
func (g *Groups) markPending(sh *shape) bool {
	for _, ex := range sh.examples {
		var c *candidate
		if p, _, ok := jobs.BullMQKeyOf(ex); ok {
			c = g.learnt.cands[candKey(jobs.BullMQ, p)]
			if c != nil && c.marks&bullMeta == 0 {
				c = nil
			}
		}
		if c != nil && !c.trusted() && !c.markRead {
			return true
		}
	}
	return false
}

// AwaitsMark reports whether the group's keys are named as a job library's under a prefix whose
// deciding mark has been seen but not read yet: no entry is adopted for it until it is, even at
// a sweep's end (the next sweep reads it).
func (gr Group) AwaitsMark() bool { return gr.awaitsMark }

// MayBeLibrary reports whether the group's keys are named as a job library names its keys under
// a prefix whose marks were not seen (yet): an entry inferred while the sweep is under way waits
// for its end, when the library's group has taken them if it is theirs.
func (gr Group) MayBeLibrary() bool { return gr.mayBeLibrary }
