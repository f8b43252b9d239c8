package tui

import "strings"

// placeholder is a view whose structures are not configured: it says what it will show and how
// to configure it, rather than showing a blank.
type placeholder struct {
	c    *console
	text []string
}

func newPlaceholder(c *console, text []string) *placeholder { return &placeholder{c: c, text: text} }

func (p *placeholder) render(w, h int) string {
	lines := []string{p.c.styles.Title.Render(p.title()), ""}
	for _, l := range p.text[1:] {
		lines = append(lines, p.c.styles.Muted.Render(l))
	}
	return strings.Join(lines, "\n")
}

// title is the placeholder's first line: what is not configured, or with no config, not found.
func (p *placeholder) title() string {
	if p.c.status.Inferred != nil { // no config: nothing to configure, nothing found
		return strings.Replace(p.text[0], "none configured", "none found among the keys (entries inferred, no config file)", 1)
	}
	return p.text[0]
}

var countersText = []string{
	"Counters: none configured",
	"This view will list each family of windowed counters: its keys, this hour's and today's totals,",
	"events a second, keys without a TTL and the hours that do not add up to their day.",
	"",
	"Configure one in config.toml:",
	"  [[counter]]",
	`  name = "pv"`,
	`  pattern = "pv:<site>:<window>"`,
	`  hour_format = "yyyyMMddHH"`,
}

var ttlText = []string{
	"TTL health: nothing configured to check",
	"This view will list the keys of counter families and locks that have no TTL, outlive their",
	"retention or stay past their expiry, with the memory they hold.",
	"",
	"Configure a [[counter]] or a [[lock]] in config.toml.",
}

var queuesText = []string{
	"Queues: none configured",
	"This view will list each delay queue (a sorted set scored by due time), list queue and job",
	"library's queue: depth, tasks due now, tasks in flight, how long the oldest task has waited,",
	"and when the next is due, with depth and lag sparklines.",
	"",
	"Configure one in config.toml:",
	"  [[delay_queue]]",
	`  name = "orders"`,
	`  key = "delay:orders"`,
	`  score_unit = "ms"`,
}

var limitersText = []string{
	"Limiters: none configured",
	"This view will list each rate limiter's keys: hits in the current window, keys at or over their",
	"limit (over means a racy writer), the most used keys, and allowed and rejected hits a second.",
	"",
	"Configure one in config.toml:",
	"  [[limiter]]",
	`  name = "api"`,
	`  pattern = "rl:<user>"`,
	`  kind = "sliding"`,
	`  window = "1m"`,
	"  limit = 100",
}

var uniquesText = []string{
	"Uniques: none configured",
	"This view will show HyperLogLog and bitmap uniques per window: PFCOUNT per window, BITCOUNT",
	"per day, and the 7- and 30-day unions.",
	"",
	"Configure one in config.toml:",
	"  [[unique]]",
	`  name = "uv"`,
	`  pattern = "uv:<page>:<window>"`,
}

var bloomsText = []string{
	"Bloom filters: none configured",
	"This section will list each Bloom filter, hourglass's own or RedisBloom's: its",
	"adds, distinct elements, fill, and its false-positive rate now against its",
	"target, each counted or estimated from a sample of its bits.",
	"",
	"Configure one in config.toml:",
	"  [[bloom]]",
	`  name = "seen"`,
	`  pattern = "seen:<day>"`,
}
