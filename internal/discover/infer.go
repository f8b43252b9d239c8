package discover

import (
	"maps"
	"math"
	"sort"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// Result returns the groups found so far, largest first, each with its kind, evidence and
// proposed entry. It leaves the Groups as they are: a sweep under way goes on adding.
func (g *Groups) Result() Result { return g.Scaled(nil) }

// Scaled is Result with, when some master of strata was not swept to its end, each group's keys
// and memory (and the total's) scaled to the whole keyspace from the pages AddPage counted (see
// Estimate); the keys and memory seen stay in Keys and Bytes.
func (g *Groups) Scaled(strata map[string]Stratum) Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	var groups []Group
	var libs []*shape
	for _, sh := range g.libs {
		libs = append(libs, sh.clone()) // the shapes folded into it must not stay there
	}
	libs = append(libs, g.learntShapes()...)
	sort.Slice(libs, func(i, j int) bool { return libs[i].lib.key() < libs[j].lib.key() })
	skels := make([]string, 0, len(g.skels))
	for k := range g.skels {
		skels = append(skels, k)
	}
	sort.Strings(skels) // one order every time: which group takes which name must not change
	// Shapes whose dates are ids go with the same shapes of numbers.
	moves := g.datelike()
	for _, k := range skels {
		for _, sh := range g.withMoves(k, g.skels[k], moves).project() {
			if lib := foldInto(libs, sh); lib != nil {
				lib.merge(sh)
				continue
			}
			if why := libraryCounters(sh); why != "" {
				groups = append(groups, heldCounters(g.inferPart(sh), why))
				continue
			}
			if g.allExpected(sh) {
				groups = append(groups, expectedGroup(g.inferPart(sh)))
				continue
			}
			lib := mayBeLibrary(sh)
			awaits := lib && g.markPending(sh)
			for _, part := range splitUnits(sh) {
				gr := g.inferPart(part)
				gr.mayBeLibrary, gr.awaitsMark = lib, awaits
				groups = append(groups, gr)
			}
		}
	}
	for _, sh := range libs {
		gr := inferLibrary(sh)
		gr.members = own(sh)
		groups = append(groups, gr)
	}
	largestFirst(groups)
	groups = mergeWindows(groups)
	largestFirst(groups)
	nameEntries(groups) // the largest group of a name takes it plain
	r := Result{Keys: g.keys, Groups: groups}
	if r.Groups == nil {
		r.Groups = []Group{}
	}
	r.Bytes, r.BytesNote = totalBytes(groups, g.skels, g.libs)
	for _, sh := range g.allShapes() {
		r.Sampled += int64(sh.ev.sampled)
	}
	g.scale(&r, strata)
	for i := range r.Groups {
		r.Groups[i].members = nil
	}
	return r
}

// inferPart is infer with what splitUnits left on the shape: its excluded keys and a note.
func (g *Groups) inferPart(sh *shape) Group {
	gr := g.infer(sh)
	gr.members = own(sh)
	note := sh.splitNote
	if en := gr.Entry; en != nil && en.Pattern != "" && len(sh.exclude) > 0 {
		en.Exclude = sh.exclude
		note += ", left out of this pattern by exclude"
	}
	if note != "" {
		gr.Evidence = append(gr.Evidence, note)
	}
	return gr
}

// project merges a skeleton's shapes over the word segments that vary enough to be dims, and
// returns the merged shapes (copies: the skeleton's own go on counting).
func (sk *skeleton) project() []*shape {
	windowed := false
	for _, c := range sk.classes {
		windowed = windowed || c.timeClass()
	}
	dim := make([]bool, len(sk.classes))
	for i := 1; i < len(sk.classes); i++ {
		if sk.classes[i] != clWord {
			continue
		}
		n := len(sk.words[i])
		dim[i] = sk.wordOver[i] || n >= 3 && (windowed || n > maxDistinct/2 || int64(2*n) >= sk.keys) && sk.alike(i)
	}
	byKey := map[string]*shape{}
	var order []string
	keys := make([]string, 0, len(sk.shapes))
	for k := range sk.shapes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sh := sk.shapes[k]
		words := append([]string(nil), sh.words...)
		for i := range words {
			if dim[i] {
				words[i] = ""
			}
		}
		key := strings.Join(words, "\x00")
		into := byKey[key]
		if into == nil {
			into = &shape{skel: sk, words: words, slots: make([]slotStat, len(sk.classes)), derived: true}
			byKey[key] = into
			order = append(order, key)
		}
		into.merge(sh)
	}
	out := make([]*shape, len(order))
	for i, k := range order {
		out[i] = byKey[k]
	}
	return out
}

// largestFirst sorts groups by keys, then pattern, then kind.
func largestFirst(groups []Group) {
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.Keys != b.Keys {
			return a.Keys > b.Keys
		}
		if a.Pattern != b.Pattern {
			return a.Pattern < b.Pattern
		}
		return a.Kind < b.Kind
	})
}

// alike reports whether the shapes that differ only in segment i's word hold values read alike
// (the same type; for strings integers, HyperLogLogs, binary or text), as one placeholder there
// would make them one group: stats:<ad>:pv counts, while stats:<ad>:uv is a HyperLogLog.
func (sk *skeleton) alike(i int) bool {
	seen := map[string]string{}
	for _, sh := range sk.shapes {
		r := sh.ev.reading()
		if r == "" {
			continue
		}
		words := append([]string(nil), sh.words...)
		words[i] = ""
		k := strings.Join(words, "\x00")
		if have, ok := seen[k]; ok && have != r {
			return false
		}
		seen[k] = r
	}
	return true
}

// foldInto returns the library among libs that every example of sh belongs to, when that library
// has shown its own registry or its prefix was found by its marks: then sh is its keys with names
// anyone could have (Sidekiq's queue:<name> lists, Celery's queue lists), or keys met before the
// prefix was trusted.
func foldInto(libs []*shape, sh *shape) *shape {
	var best *shape
	for _, lib := range libs {
		if !lib.registry && lib.lib.cand == nil || len(sh.examples) == 0 {
			continue
		}
		all := true
		for _, ex := range sh.examples {
			all = all && (lib.lib.claims(ex) || lib.knows(ex))
		}
		if all && (best == nil || len(lib.lib.source.Prefix) > len(best.lib.source.Prefix)) {
			best = lib // the longest prefix: "acme:eu" before "acme"
		}
	}
	return best
}

// clone copies sh, so that merging into the copy leaves sh as it is.
func (sh *shape) clone() *shape {
	c := *sh
	c.derived, c.members = true, append([]*shape(nil), own(sh)...)
	c.examples = append([]string(nil), sh.examples...)
	c.queues = append([]string(nil), sh.queues...)
	c.slots = append([]slotStat(nil), sh.slots...)
	for i := range c.slots {
		c.slots[i].distinct = maps.Clone(c.slots[i].distinct)
	}
	c.ev.types = maps.Clone(sh.ev.types)
	c.ev.units = maps.Clone(sh.ev.units)
	c.ev.unitKeys = maps.Clone(sh.ev.unitKeys)
	for u, names := range c.ev.unitKeys {
		c.ev.unitKeys[u] = append([]string(nil), names...)
	}
	return &c
}

// allShapes lists every shape kept. g.mu is held.
func (g *Groups) allShapes() []*shape {
	var out []*shape
	for _, sk := range g.skels {
		for _, sh := range sk.shapes {
			out = append(out, sh)
		}
	}
	for _, sh := range g.libs {
		out = append(out, sh)
	}
	return out
}

// totalBytes adds up the groups' estimates; nil, with the reason, when no sample's memory was
// read.
func totalBytes(groups []Group, skels map[string]*skeleton, libs map[string]*shape) (*int64, string) {
	if len(groups) == 0 { // no unclaimed key: their memory is 0, known
		var none int64
		return &none, ""
	}
	var total int64
	known, unknown := false, int64(0)
	for _, gr := range groups {
		if gr.Bytes != nil {
			total += *gr.Bytes
			known = true
		} else {
			unknown += gr.Keys
		}
	}
	reason := ""
	for _, sk := range skels {
		for _, sh := range sk.shapes {
			if sh.ev.bytesErr != "" {
				reason = sh.ev.bytesErr
			}
		}
	}
	for _, sh := range libs {
		if sh.ev.bytesErr != "" {
			reason = sh.ev.bytesErr
		}
	}
	if !known {
		if reason == "" {
			reason = "no key sampled yet"
		}
		return nil, reason
	}
	note := "estimated: each group's sampled keys' mean MEMORY USAGE times its keys"
	if unknown > 0 {
		note += "; " + format.Commas(unknown) + " keys in groups with no sample are left out"
	}
	return &total, note
}

// estimate is a shape's keys times its samples' mean memory, or nil.
func estimate(sh *shape) *int64 {
	m := sh.ev.bytesPerKey()
	if math.IsNaN(m) {
		return nil
	}
	b := int64(math.Round(m * float64(sh.keys)))
	return &b
}
