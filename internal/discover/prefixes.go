package discover

import (
	"slices"
	"sort"
	"strings"

	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// Some job libraries put their keys under a prefix of the user's choosing (Sidekiq's
// redis-namespace, BullMQ's prefix, kombu's global_keyprefix). Their keys are found under any
// prefix by the names each library gives its keys alike in every app, its marks (jobs.Marks,
// from the library's row), and a prefix is the library's only once the evidence its marks
// weigh holds (jobs.Proof). Discover follows the prefixes, samples the marks that decide, and
// routes a trusted prefix's keys to its group.
//
// Keys met before their prefix was trusted are in shapes; the Result folds each shape whose
// examples the library claims into the library's group. A prefix holding an all-digit segment
// is an id, not a prefix, and at most maxCandidates prefixes a library are followed.

// maxCandidates bounds the prefixes followed per library.
const maxCandidates = 64

// marker is a library whose keys are recognised under a prefix its user chose.
type marker struct {
	layout jobs.Layout
	marks  jobs.Marks
}

// markers are the libraries with marks, in the table's order.
var markers = func() []marker {
	var out []marker
	for _, l := range jobs.Layouts {
		if m := l.Marks(); m != nil {
			out = append(out, marker{l, m})
		}
	}
	return out
}()

// candidate is a prefix under which a library's marks were seen.
type candidate struct {
	lib       *Library   // the library under the prefix; lib.cand is this candidate
	proof     jobs.Proof // what its keys showed
	confirmed bool       // trusted once: its keys are routed to its group since
}

// learning is what Groups found of prefixes: the candidates, and the trusted ones' libraries,
// longest prefix first, which claim names as they are added.
type learning struct {
	cands  map[string]*candidate // by layout and prefix
	per    map[jobs.Layout]int
	routes []*Library
}

func candKey(l jobs.Layout, prefix string) string { return string(l) + "\x00" + prefix }

// learn notes name as a mark of a library under its prefix, a prefix other than the one under
// which the library's keys are its by name. g.mu is held.
func (g *Groups) learn(name string) {
	for _, m := range markers {
		mark, ok := m.marks.Mark(name)
		if !ok || mark.Prefix == m.layout.DefaultPrefix() && !m.layout.ByMarksOnly() {
			continue
		}
		if c := g.candidate(m.layout, mark.Prefix, mark.Strong); c != nil {
			c.proof.Saw(name)
			g.check(c)
		}
	}
}

// learnSample notes what a sample of a mark showed, for a prefix already followed. g.mu is held.
func (g *Groups) learnSample(s Sample) {
	if s.Type == "" || s.Type == "none" {
		return
	}
	for _, m := range markers {
		mark, ok := m.marks.Mark(s.Name)
		if !ok {
			continue
		}
		if c := g.learnt.cands[candKey(m.layout, mark.Prefix)]; c != nil {
			c.proof.Sampled(jobs.MarkSample{Name: s.Name, Type: s.Type, Member: s.Member, Field: s.Field})
			g.check(c)
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
	prefix = strings.Clone(prefix)
	c := &candidate{proof: l.Marks().Proof(prefix)}
	c.lib = newLibrary(jobs.Source{Layout: l, Prefix: prefix})
	c.lib.cand = c
	g.learnt.cands[k] = c
	g.learnt.per[l]++
	return c
}

// evictWeak drops a candidate of l not trusted and with no strong mark, if there is one.
func (g *Groups) evictWeak(l jobs.Layout) bool {
	for k, c := range g.learnt.cands {
		if c.lib.Job == l && !c.confirmed && !c.proof.Strong() {
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
	if c.confirmed || !c.proof.Trusted() {
		return
	}
	c.confirmed = true
	g.learnt.routes = append(g.learnt.routes, c.lib)
	sort.SliceStable(g.learnt.routes, func(i, j int) bool {
		return len(g.learnt.routes[i].source.Prefix) > len(g.learnt.routes[j].source.Prefix)
	})
}

// routed returns the trusted prefix's library that claims name, if any, and whether name is
// where it registers its queues. g.mu is held.
func (g *Groups) routed(name string) (*Library, bool) {
	for _, l := range g.learnt.routes {
		if !strings.HasPrefix(name, l.keyPrefix) {
			continue
		}
		if k, ok := l.source.Classify(name); ok {
			return l, k.Registry
		}
	}
	return nil, false
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

// libraryCounters says why sh is proposed no entry when every example of it is one of a
// library's counters (Sidekiq's stat:processed:<date> and the like) whose library was not found:
// such keys are not proposed as a counter family, which would claim them before the library's
// entry could. "" when they are not.
func libraryCounters(sh *shape) string {
	held := ""
	for _, ex := range sh.examples {
		if held = heldMark(ex); held == "" {
			return ""
		}
	}
	return held
}

// heldMark says why a group of keys named name alone is proposed no entry, "" for most names.
func heldMark(name string) string {
	for _, m := range markers {
		if mark, ok := m.marks.Mark(name); ok && mark.Held != "" {
			return mark.Held
		}
	}
	return ""
}

// MemberRead reports whether the sweep reads one member of the sampled set, or the first
// element of the sampled list, named name into Sample.Member: one of a library's marks whose
// content says whose it is (a kombu binding set's under a global_keyprefix, a job of a list
// named as Sidekiq's queue:<name>, whose jid tells Sidekiq's from Resque's).
func MemberRead(name string) bool {
	for _, m := range markers {
		if mark, ok := m.marks.Mark(name); ok && mark.Member {
			return true
		}
	}
	return false
}

// maxMarkReads bounds the marks sampled past their shapes' sampling in one sweep.
const maxMarkReads = 256

// markWanted reports whether name is a library's mark (BullMQ's meta hash, a kombu binding set,
// a Sidekiq queue list: what a read of trusts a prefix) under a prefix whose evidence is not in
// yet. Such a key is sampled whatever its shape's sampling takes, so whether a prefix is trusted
// in a sweep does not hang on which of its keys a sample happens to read. g.mu is held.
func (g *Groups) markWanted(name string) bool {
	if g.markReads >= maxMarkReads {
		return false
	}
	for _, m := range markers {
		mark, ok := m.marks.Mark(name)
		if !ok || !mark.Member && mark.Field == "" {
			continue
		}
		if c := g.learnt.cands[candKey(m.layout, mark.Prefix)]; c != nil && !c.proof.Trusted() {
			g.markReads++
			return true
		}
	}
	return false
}

// HashField is the field of a sampled hash named name whose value the sweep reads into
// Sample.Field: the field of a library's mark that says whose it is (a BullMQ meta hash's
// version); for other hashes, the field by which hourglass's Bloom filters' metadata is known
// (store.BloomLayoutField).
func HashField(name string) string {
	for _, m := range markers {
		if mark, ok := m.marks.Mark(name); ok && mark.Field != "" {
			return mark.Field
		}
	}
	return store.BloomLayoutField
}

// heldCounters is a group of a library's counters whose library was not found: no entry.
func heldCounters(gr Group, why string) Group {
	gr.Kind, gr.Confidence, gr.Entry = KindUndecided, Low, nil
	gr.Evidence = append(gr.Evidence, why)
	return gr
}

// libraryPattern is how a library's group is named: its prefix and the library.
func libraryPattern(l *Library) string { return l.keyPrefix + "… (" + l.Name + ")" }

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

// mayBeLibrary reports whether every example of sh is named as a key a library with marks
// keeps, under some prefix (a queue's list or sorted set, a mark; for BullMQ any key it keeps for
// a queue as a whole, its marker sorted set among them, which a group of a queue's sorted sets
// holds beside its delayed set): until the sweep has seen every key, their library's marks may
// still come, and with them the library's entry, which the keys are.
func mayBeLibrary(sh *shape) bool {
	for _, ex := range sh.examples {
		if !slices.ContainsFunc(markers, func(m marker) bool { _, ok := m.marks.Named(ex); return ok }) {
			return false
		}
	}
	return len(sh.examples) > 0
}

// markPending reports whether sh's keys are named as a library's under a prefix whose deciding
// mark has been seen by name (BullMQ's meta hash) but not read yet: whether they are that
// library's is not known until it is. g.mu is held.
func (g *Groups) markPending(sh *shape) bool {
	for _, ex := range sh.examples {
		for _, m := range markers {
			p, ok := m.marks.Named(ex)
			if c := g.learnt.cands[candKey(m.layout, p)]; ok && c != nil && c.proof.Pending() {
				return true
			}
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
