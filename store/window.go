package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Granularity is the length of a counter window.
type Granularity int

const (
	// Hour windows start on the hour in the configured time zone.
	Hour Granularity = iota
	// Day windows start at midnight in the configured time zone.
	Day
)

// String returns "hour" or "day".
func (g Granularity) String() string {
	if g == Day {
		return "day"
	}
	return "hour"
}

// Window is one time bucket: [Start, End) in the time zone the windows are cut in.
type Window struct {
	Granularity Granularity
	Start       time.Time
	End         time.Time
}

// WindowAt returns the window of granularity g that holds t, cut in loc. Day windows follow the
// calendar. A DST day is 23 or 25 hours long, and starts at 1 a.m. where the clocks skip midnight.
// Hour windows follow the wall clock in loc, so a zone offset of half an hour still starts them on
// its own hour. An hour that a half-hour DST change cuts short starts at the change.
func WindowAt(g Granularity, t time.Time, loc *time.Location) Window {
	t = t.In(loc)
	y, m, d := t.Date()
	if g == Day {
		return Window{Granularity: Day, Start: dayStart(y, m, d, loc), End: dayStart(y, m, d+1, loc)}
	}
	start := hourStart(t)
	return Window{Granularity: Hour, Start: start, End: hourStart(start.Add(time.Hour))}
}

// dayStart is the first instant of the day y-m-d in loc. The date is normalised, so d may run past
// the month's end. The first instant is midnight, or the DST change where the clocks skip midnight.
// (Chile, Cuba, Egypt and the Azores change at 00:00, and time.Date may put that on the day
// before.)
func dayStart(y int, m time.Month, d int, loc *time.Location) time.Time {
	y, m, d = time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Date()
	start := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if start.Day() != d {
		if _, change := start.ZoneBounds(); !change.IsZero() {
			start = change
		}
	}
	return start
}

// hourStart is the first instant of t's hour on the wall clock: t less its minutes and seconds.
// When the zone's offset changed within the hour, it is the instant of that change. That happens at
// a half-hour DST change, or on the second pass of an hour the clocks go back over.
func hourStart(t time.Time) time.Time {
	start := t.Add(-time.Duration(t.Minute())*time.Minute - time.Duration(t.Second())*time.Second -
		time.Duration(t.Nanosecond()))
	if change, _ := t.ZoneBounds(); !change.IsZero() && change.After(start) { // zero: no change before
		_, before := change.Add(-time.Nanosecond).Zone()
		if _, after := t.Zone(); before != after {
			start = change
		}
	}
	return start
}

// Prev returns the window just before w.
func (w Window) Prev() Window {
	return WindowAt(w.Granularity, w.Start.Add(-time.Nanosecond), w.Start.Location())
}

// Contains reports whether t falls in w.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.Start) && t.Before(w.End)
}

// WindowFormat is a window format given in the Java style users know from their writers
// (yyyyMMddHH, yyyyMMdd, yyyy-MM-dd HH), translated once into a Go layout.
type WindowFormat struct {
	java   string
	layout string
	// Byte offsets of each field in a formatted window, -1 when absent, for reading windows back
	// without time.Parse: sweeps read one per key.
	year4, year2, month, day, hour int
}

// javaFields maps the Java date letters we accept to Go layout elements, longest first.
var javaFields = []struct{ java, layout string }{
	{"yyyy", "2006"}, {"yy", "06"}, {"MM", "01"}, {"dd", "02"}, {"HH", "15"},
}

// ParseWindowFormat translates a Java-style format for granularity g. An hour format needs a
// year, month, day and HH; a day format a year, month and day and no hour. Letters other than
// these fields are refused (quote nothing: separators such as '-', ':' and '_' are literal).
func ParseWindowFormat(g Granularity, java string) (WindowFormat, error) {
	if java == "" {
		return WindowFormat{}, fmt.Errorf("empty format")
	}
	var layout strings.Builder
	have := map[string]bool{}
	wf := WindowFormat{java: java, year4: -1, year2: -1, month: -1, day: -1, hour: -1}
	offsets := map[string]*int{"yyyy": &wf.year4, "yy": &wf.year2, "MM": &wf.month, "dd": &wf.day, "HH": &wf.hour}
	for rest := java; rest != ""; {
		matched := false
		for _, f := range javaFields {
			if strings.HasPrefix(rest, f.java) {
				if have[f.java[:1]] {
					return WindowFormat{}, fmt.Errorf("%q repeats %q", java, f.java)
				}
				have[f.java[:1]] = true
				*offsets[f.java] = layout.Len()
				layout.WriteString(f.layout)
				rest = rest[len(f.java):]
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		c := rest[0]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			return WindowFormat{}, fmt.Errorf("%q: unsupported letter %q (use yyyy, yy, MM, dd, HH)", java, c)
		}
		if c >= '0' && c <= '9' {
			return WindowFormat{}, fmt.Errorf("%q: digits are not allowed", java)
		}
		layout.WriteByte(c)
		rest = rest[1:]
	}
	for _, need := range []string{"y", "M", "d"} {
		if !have[need] {
			return WindowFormat{}, fmt.Errorf("%q lacks %s", java, map[string]string{"y": "yyyy", "M": "MM", "d": "dd"}[need])
		}
	}
	if g == Hour && !have["H"] {
		return WindowFormat{}, fmt.Errorf("%q lacks HH", java)
	}
	if g == Day && have["H"] {
		return WindowFormat{}, fmt.Errorf("%q has HH, which a day window cannot have", java)
	}
	wf.layout = layout.String()
	return wf, nil
}

// String returns the format in the Java style it was given in.
func (f WindowFormat) String() string { return f.java }

// Format renders the start of w. It writes the fields itself rather than through time.Format,
// which would read some literal text next to a field ("__" before yyyy) as a layout element.
func (f WindowFormat) Format(w Window) string {
	y, m, d := w.Start.Date()
	fields := []struct {
		at, width, value int
	}{{f.year4, 4, y}, {f.year2, 2, (y%100 + 100) % 100}, {f.month, 2, int(m)}, {f.day, 2, d}, {f.hour, 2, w.Start.Hour()}}
	b := make([]byte, 0, len(f.layout))
	for i := 0; i < len(f.layout); {
		field := -1
		for j, fd := range fields {
			if fd.at == i {
				field = j
			}
		}
		if field < 0 {
			b = append(b, f.layout[i])
			i++
			continue
		}
		fd := fields[field]
		if fd.value < 0 || fd.value >= pow10[fd.width] { // a year past 9999: longer, and never read back
			b = strconv.AppendInt(b, int64(fd.value), 10)
		} else {
			for p := pow10[fd.width-1]; p > 0; p /= 10 {
				b = append(b, byte('0'+fd.value/p%10))
			}
		}
		i += fd.width
	}
	return string(b)
}

var pow10 = [...]int{1, 10, 100, 1000, 10000}

// Parse reads a formatted window back, in loc. It is strict: the text must be exactly what
// Format would produce, so "2024011", "20240132" or an hour skipped by a DST change are refused.
func (f WindowFormat) Parse(g Granularity, text string, loc *time.Location) (Window, error) {
	w, ok := f.parse(g, text, loc)
	if !ok {
		return Window{}, fmt.Errorf("window %q does not match %s", text, f.java)
	}
	return w, nil
}

// parse is Parse without an error value, so that rejecting the many keys a sweep meets that are
// not windows allocates nothing.
func (f WindowFormat) parse(g Granularity, text string, loc *time.Location) (Window, bool) {
	if len(text) != len(f.layout) {
		return Window{}, false
	}
	for i := 0; i < len(text); i++ {
		if c := f.layout[i]; c >= '0' && c <= '9' { // a field's place in the layout
			if text[i] < '0' || text[i] > '9' {
				return Window{}, false
			}
		} else if text[i] != c {
			return Window{}, false
		}
	}
	num := func(at, n int) int {
		v := 0
		for _, c := range []byte(text[at : at+n]) {
			v = v*10 + int(c-'0')
		}
		return v
	}
	var year int
	switch {
	case f.year4 >= 0:
		year = num(f.year4, 4)
	default:
		year = num(f.year2, 2) + 2000 // as Go reads "06": 69-99 are 19xx
		if year >= 2069 {
			year -= 100
		}
	}
	month, day, hour := num(f.month, 2), num(f.day, 2), 0
	if f.hour >= 0 {
		hour = num(f.hour, 2)
	}
	// An instant the window holds: noon for a day, whose midnight the clocks may skip; for an
	// hour its first minute, or its last when a half-hour DST change skips its first half.
	for _, min := range []int{0, 59} {
		t := time.Date(year, time.Month(month), day, hour, min, 0, 0, loc)
		if f.hour < 0 {
			t = time.Date(year, time.Month(month), day, 12, 0, 0, 0, loc)
		}
		if t.Year() == year && int(t.Month()) == month && t.Day() == day && (f.hour < 0 || t.Hour() == hour) {
			return WindowAt(g, t, loc), true
		}
	}
	return Window{}, false // out of range (month 13, February 30) or an hour the clocks skip
}
