package discover

import (
	"fmt"
	"strconv"
	"strings"
)

// TOML renders the entry as one config.toml table, its keys in the order the config reference
// gives them. Every string is a TOML basic string: patterns hold only the characters discover
// lets into a literal, and names only letters, digits and underscores.
func (e *Entry) TOML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[[%s]]\n", e.Table)
	str := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, strconv.Quote(v))
		}
	}
	str("name", e.Name)
	str("layout", e.Layout)
	str("prefix", e.Prefix)
	str("key", e.Key)
	str("pattern", e.Pattern)
	str("kind", e.LimiterKind)
	str("hour_format", e.HourFormat)
	str("hour_retention", e.HourRetention)
	str("day_format", e.DayFormat)
	str("day_retention", e.DayRetention)
	str("score_unit", e.ScoreUnit)
	str("window", e.Window)
	if e.Limit > 0 {
		fmt.Fprintf(&b, "limit = %d\n", e.Limit)
	}
	if e.InFlight != nil {
		fmt.Fprintf(&b, "inflight = %s\n", strconv.Quote(*e.InFlight))
	}
	if e.Processing != nil {
		fmt.Fprintf(&b, "processing = %s\n", strconv.Quote(*e.Processing))
	}
	return b.String()
}
