package discover

import (
	"fmt"
	"strconv"
	"strings"
)

// layout is a group's pattern with what each placeholder stands for.
type layout struct {
	text   string
	window int    // the segment that is the <window>, or -1
	varies []bool // per segment: a placeholder
	names  []string
	dims   []string // evidence: each placeholder and what it held
	// timeSeg is the last time token segment (a window in a format no family reads), or -1.
	timeSeg int
}

// patternOf builds sh's pattern: literal words and constant segments as they are, the last date
// window as <window>, every other varying segment as a placeholder named after what it holds.
func patternOf(sh *shape) layout { return layoutOf(sh, true) }

// keyLayout is sh's pattern for keys that are not windowed (a lock's, a limiter's): a time in the
// name is a placeholder like any other.
func keyLayout(sh *shape) layout { return layoutOf(sh, false) }

func layoutOf(sh *shape, windowed bool) layout {
	sk := sh.skel
	l := layout{window: -1, timeSeg: -1, varies: make([]bool, len(sk.classes)), names: make([]string, len(sk.classes))}
	for i := len(sk.classes) - 1; i >= 0; i-- {
		if sk.classes[i].timeClass() && l.timeSeg < 0 {
			l.timeSeg = i
		}
		if windowed && sk.classes[i].dateWindow() && l.window < 0 {
			l.window = i
		}
	}
	used := map[string]bool{}
	var b strings.Builder
	for i, c := range sk.classes {
		if i > 0 {
			b.WriteByte(sk.seps[i])
		}
		st := sh.slots[i]
		single := !st.over && len(st.distinct) == 1
		switch {
		case i == l.window:
			l.varies[i] = true
			l.names[i] = "window"
			b.WriteString("<window>")
		case c == clWord && sh.words[i] != "", c == clEmpty:
			b.WriteString(sh.words[i])
		case single && !c.timeClass() && c != clBlob:
			for v := range st.distinct {
				b.WriteString(v)
			}
		default:
			name := dimName(sh, i, used)
			l.varies[i], l.names[i] = true, name
			b.WriteString("<" + name + ">")
			l.dims = append(l.dims, fmt.Sprintf("<%s>: %s, %s", name, c.describe(), distinctText(st)))
		}
	}
	l.text = b.String()
	return l
}

// dimName names segment i after what it holds (<ip>, <app> for app12, <name> for words), or for
// numbers and hex after the literal words before it (user:<user>), unused so far.
func dimName(sh *shape, i int, used map[string]bool) string {
	sk := sh.skel
	base := ""
	switch sk.classes[i] {
	case clIP:
		base = "ip"
	case clUUID:
		base = "uuid"
	case clID:
		base = letterPrefix(sh.slots[i].sample)
	case clHour:
		base = "hour"
	case clDay, clDayDash:
		base = "day"
	case clMinute:
		base = "minute"
	case clWeek:
		base = "week"
	case clUnixS, clUnixMS:
		base = "time"
	case clWord:
		// Words are names of things (queues, pages, metrics): the word before them is more often
		// their container (stats:<name>, delay:<name>) than what they are.
		base = "name"
	}
	if base == "" {
		base = wordsBefore(sh, i)
	}
	base = placeholderSafe(base)
	if base == "" || base == "window" {
		base = map[class]string{clNum: "id", clHex: "hex", clWord: "name", clBlob: "part"}[sk.classes[i]]
		if base == "" {
			base = "part"
		}
	}
	name := base
	for n := 2; used[name]; n++ {
		name = base + strconv.Itoa(n)
	}
	used[name] = true
	return name
}

// letterPrefix is the letters of an id such as "app12" or "device456" (letters, then digits),
// lowercased, or "".
func letterPrefix(v string) string {
	i := 0
	for i < len(v) && (v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z') {
		i++
	}
	if i == 0 || i == len(v) || !allDigits(v[i:]) {
		return ""
	}
	return strings.ToLower(v[:i])
}

// wordsBefore is the literal words just before segment i, joined as they are by '_' or '-'
// ("last_seen"), lowercased with '_' between them, or "".
func wordsBefore(sh *shape, i int) string {
	sk := sh.skel
	var words []string
	for j := i - 1; j >= 0 && sk.classes[j] == clWord && sh.words[j] != ""; j-- {
		words = append([]string{strings.ToLower(sh.words[j])}, words...)
		if sep := sk.seps[j]; j == 0 || sep != '_' && sep != '-' || len(words) == 3 {
			break
		}
	}
	return strings.Join(words, "_")
}

// placeholderSafe keeps the letters, digits and underscores of s, starting with a letter, up to
// 24 bytes.
func placeholderSafe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 24; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			b.WriteByte(c)
		case c >= '0' && c <= '9' && b.Len() > 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// distinctText says how many values a segment held.
func distinctText(st slotStat) string {
	if st.over {
		return fmt.Sprintf("over %d values", maxDistinct)
	}
	if len(st.distinct) == 1 {
		return "1 value"
	}
	return fmt.Sprintf("%d values", len(st.distinct))
}
