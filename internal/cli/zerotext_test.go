package cli

import (
	"encoding/json"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// textCell is one cell of an aligned table: its text and where it sits, in runes.
type textCell struct {
	text       string
	start, end int
}

var cellRun = regexp.MustCompile(`\S+(?: \S+)*`)

// cellsOf splits a table line into its cells (runs of text apart by two spaces or more).
func cellsOf(line string) []textCell {
	var out []textCell
	for _, loc := range cellRun.FindAllStringIndex(line, -1) {
		start := len([]rune(line[:loc[0]]))
		text := line[loc[0]:loc[1]]
		out = append(out, textCell{text, start, start + len([]rune(text))})
	}
	return out
}

// column is the header cell a row's cell falls under: the one it overlaps most, else the
// nearest.
func column(header []textCell, c textCell) string {
	best, bestScore := "", -1<<30
	for _, h := range header {
		score := min(h.end, c.end) - max(h.start, c.start) // the overlap; negative: the gap
		if score > bestScore {
			best, bestScore = h.text, score
		}
	}
	return best
}

// zeroText is a cell that shows a 0: a count, a rate or a duration.
var zeroText = regexp.MustCompile(`^[~≈≥]?0(\.0+)?(ms|s|/s)?$`)

// notKeptText are the cells that say a figure is not there: not kept, unknown, or the keys'
// own.
var notKeptText = map[string]bool{"—": true, "?": true, "per key": true, "-": true}

var (
	limiterColumns = map[string]string{"KEYS": "keys", "HITS": "hits", "AT LIMIT": "at_limit", "OVER": "over_limit",
		"ALLOWED/H": "allowed", "REJECTED/H": "rejected", "REFUSED": "refused_in_window", "LIMIT": "limit", "WINDOW": "window_ms"}
	jobColumns = map[string]string{"WAITING": "waiting", "LATENCY": "latency_ms", "ACTIVE": "active", "SCHEDULED": "scheduled", "DUE": "due",
		"LAG": "oldest_due_age_ms", "NEXT IN": "next_due_in_ms", "RETRY": "retry", "DEAD": "dead", "DONE": "completed"}
)

// checkCell holds a cell to the JSON field it shows: a 0 only where the JSON has 0, "—" (or
// another word for "not there") where it has null.
func checkCell(t *testing.T, where string, obj map[string]any, field, text string) {
	t.Helper()
	v, ok := obj[field]
	n, isNum := v.(json.Number)
	switch {
	case !ok:
		t.Errorf("%s: no JSON field %q beside the cell %q", where, field, text)
	case v == nil && !notKeptText[text]:
		t.Errorf("%s: shows %q where the JSON's %s is null (not kept)", where, text, field)
	case zeroText.MatchString(text) && (!isNum || n.String() != "0"):
		t.Errorf("%s: shows %q where the JSON's %s is %v", where, text, field, v)
	}
}

// checkReport walks the text report's tables: each cell of a limiter's or a job queue's row is
// held to its JSON field; a 0 in any other table is one no field accounts for.
func checkReport(t *testing.T, c zeroCase, doc map[string]any) {
	code, out, errOut := hg(t, "snapshot", "--config", c.path)
	if code != exitOK {
		t.Fatalf("%s: snapshot exit %d: %s", c.name, code, errOut)
	}
	for _, block := range strings.Split(out, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		header := cellsOf(lines[0])
		if len(header) < 2 || strings.ToUpper(header[1].text) != header[1].text {
			continue // not a table
		}
		for _, line := range lines[1:] {
			if strings.HasPrefix(line, "  ") { // a note under the table
				continue
			}
			cells := cellsOf(line)
			obj, columns := reportRow(doc, header[0].text, cells[0].text)
			if header[0].text == "BLOOM" && len(cells) > 1 {
				obj, columns, cells = bloomRow(doc, cells[0].text, cells[1].text), bloomColumns, cells[1:]
			}
			for _, cell := range cells[1:] {
				col := column(header, cell)
				where := c.name + ": report " + header[0].text + " " + cells[0].text + " " + col
				switch field, ok := columns[col]; {
				case ok && obj != nil:
					checkCell(t, where, obj, field, cell.text)
				case zeroText.MatchString(cell.text):
					t.Errorf("%s: shows %q, which no JSON field accounts for", where, cell.text)
				}
			}
		}
	}
}

// reportRow finds the JSON object a row of the report's table shows, and its columns' fields.
func reportRow(doc map[string]any, table, name string) (map[string]any, map[string]string) {
	switch {
	case table == "LIMITER":
		return find(list(doc, "limiters"), "name", name), limiterColumns
	case strings.HasPrefix(table, "JOBS RUN "): // what a library counts of the jobs it ran
		return throughputRow(doc, strings.TrimPrefix(table, "JOBS RUN "), strings.TrimSuffix(name, "all queues")), throughputColumns
	case strings.HasPrefix(table, "JOBS "):
		entry := find(list(doc, "job_queues"), "name", strings.Fields(table)[1])
		if name == "(all queues)" {
			shared, _ := entry["shared"].(map[string]any)
			return shared, jobColumns
		}
		queues, _ := entry["queues"].([]any)
		return find(queues, "queue", strings.TrimSuffix(name, " (paused)")), jobColumns
	}
	return nil, nil
}

// throughputColumns are the report's jobs-run columns and the fields they show; today's are
// the first day's (throughputRow puts them beside the row's own).
var throughputColumns = map[string]string{"RUN/S": "processed_per_sec", "FAILED/S": "failed_per_sec", "TODAY": "today",
	"FAILED": "failed_today", "TOTAL": "processed_total", "FAILED TOTAL": "failed_total"}

// throughputRow is the JSON row of entry's jobs run for queue ("" for all queues), with today's
// counts (null without days) as fields of its own.
func throughputRow(doc map[string]any, entry, queue string) map[string]any {
	rows, _ := find(list(doc, "job_queues"), "name", entry)["throughput"].([]any)
	row := find(rows, "queue", queue)
	if row == nil {
		return nil
	}
	row = maps.Clone(row)
	row["today"], row["failed_today"] = nil, nil
	if days, _ := row["days"].([]any); len(days) > 0 {
		today := days[0].(map[string]any)
		row["today"], row["failed_today"] = today["processed"], today["failed"]
	}
	return row
}

func find(items []any, key, value string) map[string]any {
	for _, it := range items {
		if m, _ := it.(map[string]any); m != nil && m[key] == value {
			return m
		}
	}
	return nil
}

// series is one sample of a scrape.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

var seriesLine = regexp.MustCompile(`^(\w+)(?:\{(.*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// scrapeServe runs `hourglass serve` on the config until its metrics hold what ready names, and
// returns them.
func scrapeServe(t *testing.T, path, ready string) []series {
	body := startServe(t, "--config", path).until(ready, 20*time.Second, func(body string) bool {
		return strings.Contains(body, ready)
	})
	var samples []series
	for _, line := range strings.Split(body, "\n") {
		m := seriesLine.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(line, "#") {
			continue
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		s := series{name: m[1], labels: map[string]string{}, value: v}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[p[1]] = p[2]
		}
		samples = append(samples, s)
	}
	return samples
}
