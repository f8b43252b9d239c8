package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The text of a Bloom filter's figures. An exact figure shows plainly. An estimate shows with ≈
// and, where there is room, its 95% interval and the share of the bits it rests on. A figure the
// sweep could not read is "—". Its reason is in the filter's notes, which the detail line and the
// filter's level show.

// bloomLayouts are the filters' layouts as the operator knows them, with where a filter of each
// keeps its figures.
var bloomLayouts = map[string]struct{ name, kept string }{
	"hourglass":  {"ours", "ours: its metadata hash and a bitmap per sub-filter"},
	"redisbloom": {"RedisBloom", "RedisBloom's module type, read with BF.INFO"},
}

// bloomLayout names a filter's layout as the operator knows it.
func bloomLayout(layout string) string {
	if l, ok := bloomLayouts[layout]; ok {
		return l.name
	}
	return layout
}

// estimated reports whether f is an estimate from part of the bits (or from the bits' share
// set, whose elements are a statistic), not a count and not a figure computed from items.
func estimated(f *snapshot.BloomFigure) bool { return f != nil && !f.Exact() && f.From == "" }

// elementsCell is the ELEMENTS cell: exact, "≈12,340 (12,100–12,580, 6.0% of bits)" when wide,
// format.Approx's "≈12.3k ±1.9%" when the table is short of room; "≈150,000 from items" ("≈150k
// from items").
func elementsCell(f *snapshot.BloomFigure, wide bool) string {
	switch {
	case f == nil:
		return format.NotKept
	case f.From != "" && !wide:
		return "≈" + format.Short(f.Value) + " from " + f.From
	case f.From != "":
		return "≈" + whole(f.Value) + " from " + f.From
	case f.Exact():
		return whole(f.Value)
	case !wide:
		return format.Approx(f.Value, f.Low, f.High, "")
	}
	in := whole(f.Low) + "–" + whole(f.High)
	if f.Coverage < 1 {
		in += ", " + coverageText(f.Coverage) + " of bits"
	}
	return "≈" + whole(f.Value) + " (" + in + ")"
}

// shareCell is a share (the fill, a false-positive rate) as a percentage, ≈ when estimated.
func shareCell(f *snapshot.BloomFigure) string {
	switch {
	case f == nil:
		return format.NotKept
	case f.Exact():
		return percent(f.Value)
	}
	return "≈" + percent(f.Value)
}

// falsePosCell is the false-positive rate now against the target: "≈0.52% / 1.0%", "over" added
// when it is past the target, so a screen without colours says it too.
func falsePosCell(f snapshot.BloomFilter) string {
	target := format.NotKept
	if f.TargetRate != nil {
		target = percent(*f.TargetRate)
	}
	s := shareCell(f.FalsePositive) + " / " + target
	if f.OverTarget {
		s += " over"
	}
	return s
}

// whole is a figure rounded to a whole number, with separators.
func whole(x float64) string { return format.Commas(int64(math.Round(x))) }

// percent is a share as a percentage to two significant digits (three from 10%): 0.0052 is
// "0.52%", 0.482 "48.2%"; a share under a millionth of a percent says so rather than reading 0.
func percent(x float64) string {
	p := 100 * x
	switch {
	case p == 0:
		return "0%"
	case p >= 10:
		return fmt.Sprintf("%.1f%%", p)
	case p < 1e-6:
		return "<0.000001%"
	}
	decimals := 1 - int(math.Floor(math.Log10(p)))
	return strconv.FormatFloat(p, 'f', max(decimals, 0), 64) + "%"
}

// figureText is a figure in full, for the filter's level: "≈12,340, 95% interval 12,100–12,580,
// from 6% of its bits"; "12,340, every bit counted"; "—: not read (see the notes)".
func figureText(f *snapshot.BloomFigure, num func(float64) string) string {
	switch {
	case f == nil:
		return format.NotKept + ": not read (the notes say why)"
	case f.From != "":
		text := "≈" + num(f.Value) + ", computed from its " + f.From
		if f.Low != f.High {
			text += ", 95% interval " + num(f.Low) + "–" + num(f.High)
		}
		return text
	case f.Exact():
		return num(f.Value) + ", every bit counted"
	}
	return "≈" + num(f.Value) + ", 95% interval " + num(f.Low) + "–" + num(f.High) + ", " + bitsText(f.Coverage)
}

// bitsText says the share of a filter's bits an estimate rests on.
func bitsText(coverage float64) string {
	if coverage >= 1 {
		return "from all its bits"
	}
	return "from " + coverageText(coverage) + " of its bits"
}

// intervalsText is the detail line of a filter's estimated figures: their 95% intervals and the
// bits they rest on ("" when none is estimated).
func intervalsText(f snapshot.BloomFilter) string {
	var parts []string
	coverage := 1.0
	for _, fig := range []struct {
		name string
		f    *snapshot.BloomFigure
		num  func(float64) string
	}{{"elements", f.Elements, whole}, {"fill", f.Fill, percent}, {"false pos.", f.FalsePositive, percent}} {
		if estimated(fig.f) {
			parts = append(parts, fig.name+" "+fig.num(fig.f.Low)+"–"+fig.num(fig.f.High))
			coverage = min(coverage, fig.f.Coverage)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "≈ 95% intervals, " + bitsText(coverage) + ": " + strings.Join(parts, " · ")
}

// unreadableText says the keys of an entry no filter's reading explains, per reason, most first.
func unreadableText(b snapshot.Bloom) string {
	var total int64
	reasons := make([]string, 0, len(b.Unreadable))
	for r, n := range b.Unreadable {
		total += n
		reasons = append(reasons, r)
	}
	if total == 0 {
		return ""
	}
	sortByCount(reasons, b.Unreadable)
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = format.Commas(b.Unreadable[r]) + " " + r
	}
	return fmt.Sprintf("%s: %s not read as filters: %s", b.Name, format.Count(total, "key", "keys"), strings.Join(parts, ", "))
}

// sortByCount orders keys by their count, most first, then by name.
func sortByCount(keys []string, count map[string]int64) {
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

// subFiltersCell is a filter's sub-filters, "—" until it is read.
func subFiltersCell(n *int) string {
	if n == nil {
		return format.NotKept
	}
	return strconv.Itoa(*n)
}
