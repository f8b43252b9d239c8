package discover

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hourglass-dev/hourglass/store"
)

// Writers differ in the unit they score due times in (Python's time.time() in seconds, Java's
// currentTimeMillis in milliseconds), and keys of one name shape can come from different writers:
// delay:orders in seconds beside delay:mail in milliseconds. A group whose keys disagree is split
// where the names tell the keys apart, else given score_unit = "auto", which reads each key in
// its own unit; the evidence says what each sample held.

// unitOrder is the order units are named in when their counts tie.
var unitOrder = []store.ScoreUnit{store.Seconds, store.Milliseconds, store.Microseconds, store.BullMQScore}

// Bounds of the names the evidence keeps per unit.
const (
	maxUnitKeys    = 2
	maxUnitKeyName = 60 // bytes; longer names are cut, with "…"
)

// noteUnitKey keeps name among the first maxUnitKeys names (in byte order) scored in u, so the
// evidence names the same keys however the sweep met them.
func (e *evidence) noteUnitKey(u store.ScoreUnit, name string) {
	if e.unitKeys == nil {
		e.unitKeys = map[store.ScoreUnit][]string{}
	}
	names := e.unitKeys[u]
	i, found := slices.BinarySearch(names, name)
	if found || i >= maxUnitKeys {
		return
	}
	names = slices.Insert(names, i, strings.Clone(name))
	e.unitKeys[u] = names[:min(len(names), maxUnitKeys)]
}

// unitsByCount lists the units the sorted sets were scored in, the most used first.
func (e *evidence) unitsByCount() []store.ScoreUnit {
	var out []store.ScoreUnit
	for _, u := range unitOrder {
		if e.units[u] > 0 {
			out = append(out, u)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return e.units[out[i]] > e.units[out[j]] })
	return out
}

// unitsText says which unit the scores were in: one unit by name, or, when the samples disagree,
// how many were in each and which keys ("2 of 3 sampled keys scored in Unix seconds
// (delay:orders, delay:reports), 1 in Unix milliseconds (delay:mail)").
func unitsText(e *evidence) string {
	us := e.unitsByCount()
	if len(us) == 1 {
		return unitName(us[0])
	}
	total := 0
	for _, u := range us {
		total += e.units[u]
	}
	var parts []string
	for i, u := range us {
		names := make([]string, 0, maxUnitKeys+1)
		for _, n := range e.unitKeys[u] {
			names = append(names, cutName(n))
		}
		if e.units[u] > len(names) {
			names = append(names, "…")
		}
		part := fmt.Sprintf("%d in %s (%s)", e.units[u], unitName(u), strings.Join(names, ", "))
		if i == 0 {
			part = fmt.Sprintf("%d of %d sampled keys scored in %s (%s)", e.units[u], total, unitName(u), strings.Join(names, ", "))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ") + `: score_unit = "auto" reads each key in its own unit`
}

// cutName shortens a long key name for the evidence, on a character boundary.
func cutName(n string) string {
	if len(n) <= maxUnitKeyName {
		return n
	}
	i := maxUnitKeyName
	for i > 0 && !utf8.RuneStart(n[i]) {
		i--
	}
	return n[:i] + "…"
}

// splitUnits returns sh as it is, or, when its sorted sets disagree on the score unit and the
// shapes merged into it each hold one unit and name their keys literally where sh has a
// placeholder, sh split so every part agrees: the unit with the most keys keeps sh's pattern,
// excluding the keys of the others, and each shape of another unit stands on its own. When the
// names cannot tell the units apart, sh stays whole and its entry reads each key in its own unit.
func splitUnits(sh *shape) []*shape {
	if len(sh.ev.units) < 2 || !sh.derived || len(sh.members) < 2 {
		return []*shape{sh}
	}
	keys := map[store.ScoreUnit]int64{}
	for _, m := range sh.members {
		switch {
		case len(m.ev.units) > 1 || !literalWhereVaries(sh, m):
			return []*shape{sh}
		case len(m.ev.units) == 1:
			keys[m.ev.unit()] += m.keys
		}
	}
	major := unitOrder[0]
	for _, u := range unitOrder {
		if keys[u] > keys[major] {
			major = u
		}
	}
	keep := &shape{skel: sh.skel, words: sh.words, slots: make([]slotStat, len(sh.slots)), derived: true}
	var parts []*shape
	var exclude, others []string
	for _, m := range sh.members {
		if len(m.ev.units) == 0 || m.ev.unit() == major {
			keep.merge(m)
			continue
		}
		p := m.clone()
		p.splitNote = fmt.Sprintf("split by score unit from %s, whose other keys score in %s", patternOf(sh).text, unitName(major))
		parts = append(parts, p)
		exclude = append(exclude, globOf(keyLayout(m)))
		others = append(others, fmt.Sprintf("%s (%s)", keyLayout(m).text, unitName(m.ev.unit())))
	}
	keep.exclude = exclude
	own := "is a group of its own"
	if len(others) > 1 {
		own = "are groups of their own"
	}
	keep.splitNote = fmt.Sprintf("split by score unit: %s %s", strings.Join(others, ", "), own)
	return append([]*shape{keep}, parts...)
}

// literalWhereVaries reports whether m, a shape merged into sh, names a literal word wherever sh
// has a word placeholder: then a pattern or an exclude can name m's keys apart from the rest.
func literalWhereVaries(sh, m *shape) bool {
	for i, c := range sh.skel.classes {
		if c == clWord && sh.words[i] == "" && m.words[i] == "" {
			return false
		}
	}
	return true
}

// globOf is a layout's pattern as a SCAN MATCH glob: each placeholder "*", the rest escaped.
func globOf(l layout) string {
	var b strings.Builder
	for i := 0; i < len(l.text); i++ {
		c := l.text[i]
		switch c {
		case '<':
			if j := strings.IndexByte(l.text[i:], '>'); j > 0 {
				b.WriteByte('*')
				i += j
				continue
			}
			b.WriteByte(c)
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
