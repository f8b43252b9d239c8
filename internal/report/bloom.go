package report

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeBlooms prints each [[bloom]] entry's filters. A figure the sweep could not read is "?", and
// the filter's notes below the table say why. An estimate reads with "≈" and its interval. The keys
// of the pattern that are no filter are counted under their reason.
func writeBlooms(out io.Writer, blooms []snapshot.Bloom) {
	if len(blooms) == 0 {
		return
	}
	fmt.Fprintln(out)
	tb := NewTable("BLOOM", "KEY", "LAYOUT", ">CAPACITY", ">SUB-FILTERS", ">ADDED", ">ELEMENTS", ">FILL", ">FALSE POSITIVES", ">TARGET", "OVER", ">MEMORY", ">TTL")
	for _, b := range blooms {
		if len(b.Filters) == 0 {
			tb.Row(b.Name, "(no filter read)")
		}
		for _, f := range b.Filters {
			tb.Row(b.Name, f.Key, f.Layout, format.CommasOf(f.Capacity, format.Unknown), intOf(f.SubFilters), format.CommasOf(f.Added, format.Unknown),
				bloomFigure(f.Elements, count), bloomFigure(f.Fill, percent), bloomFigure(f.FalsePositive, percent),
				rateOf(f.TargetRate), overText(f), memoryOf(f.MemoryBytes), ttlText(f.TTLMS))
		}
	}
	tb.Write(out, "")
	for _, b := range blooms {
		for _, f := range b.Filters {
			for _, n := range f.Notes {
				fmt.Fprintf(out, "  bloom %s %s: %s\n", b.Name, f.Key, n)
			}
		}
		whys := make([]string, 0, len(b.Unreadable))
		for why := range b.Unreadable {
			whys = append(whys, why)
		}
		sort.Strings(whys)
		for _, why := range whys {
			fmt.Fprintf(out, "  bloom %s: %s of its pattern not read as filters: %s\n", b.Name, format.Count(b.Unreadable[why], "key", "keys"), why)
		}
		if b.More {
			fmt.Fprintf(out, "  bloom %s: its pattern matches more filters than a sweep reads; the first ones found are listed\n", b.Name)
		}
	}
}

// bloomFigure renders a filter's figure: exact as it is, an estimate with "≈" and its 95%
// interval, one expected from RedisBloom's items with "≈" and where it is from; "?" unknown.
func bloomFigure(f *snapshot.BloomFigure, text func(float64) string) string {
	switch {
	case f == nil:
		return format.Unknown
	case f.From != "":
		return "≈" + text(f.Value) + " (from " + f.From + ")"
	case f.Exact():
		return text(f.Value)
	}
	return fmt.Sprintf("≈%s (%s–%s)", text(f.Value), text(f.Low), text(f.High))
}

func count(v float64) string { return format.Commas(int64(math.Round(v))) }

// percent renders a share in three significant digits: "12.7%", "0.0123%".
func percent(v float64) string { return fmt.Sprintf("%.3g%%", 100*v) }

func rateOf(r *float64) string {
	if r == nil {
		return format.Unknown
	}
	return percent(*r)
}

func overText(f snapshot.BloomFilter) string {
	switch {
	case f.FalsePositive == nil || f.TargetRate == nil:
		return format.Unknown
	case f.OverTarget:
		return "OVER"
	}
	return "no"
}

func memoryOf(n *int64) string {
	if n == nil {
		return format.Unknown
	}
	return format.BytesIEC(*n)
}

func ttlText(ms int64) string {
	if ms < 0 {
		return "no TTL"
	}
	return format.Millis(ms)
}

// intOf is *n, or "?" when it was not read.
func intOf(n *int) string {
	if n == nil {
		return format.Unknown
	}
	return fmt.Sprint(*n)
}
