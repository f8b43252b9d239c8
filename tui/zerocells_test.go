package tui

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// snapshotDoc is the Snapshot as `snapshot --json` has it, decoded generically.
func snapshotDoc(t *testing.T, s *snapshot.Snapshot) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// screenCell is one cell of a table on screen: its text and where it sits, in runes.
type screenCell struct {
	text       string
	start, end int
}

var screenCellRun = regexp.MustCompile(`\S+(?: \S+)*`)

// screenCells splits a line into its cells (runs of text apart by two spaces or more).
func screenCells(line string) []screenCell {
	var out []screenCell
	for _, loc := range screenCellRun.FindAllStringIndex(line, -1) {
		start := len([]rune(line[:loc[0]]))
		text := line[loc[0]:loc[1]]
		out = append(out, screenCell{text, start, start + len([]rune(text))})
	}
	return out
}

// underHeader is the header cell a row's cell falls under: the one it overlaps most.
func underHeader(header []screenCell, c screenCell) string {
	best, bestScore := "", -1<<30
	for _, h := range header {
		if score := min(h.end, c.end) - max(h.start, c.start); score > bestScore {
			best, bestScore = h.text, score
		}
	}
	return best
}

var (
	// zeroCell is a cell that shows a 0: a count, a share, a rate or a duration.
	zeroCell = regexp.MustCompile(`^[~≈≥]?0(\.0+)?(%|ms|s|/s)?$`)
	// absentCell are the cells that say a figure is not there.
	absentCell  = map[string]bool{"—": true, "?": true, "per key": true, "-": true, "": true}
	upperLetter = regexp.MustCompile(`[A-Z]`)
	limiterCols = map[string]string{"KEYS": "keys", "AT LIMIT": "at_limit", "OVER": "over_limit", "REJECTED/S": "rejected_per_sec",
		"ALLOWED/S": "allowed_per_sec", "HITS": "hits", "LIMIT": "limit", "WINDOW": "window_ms"}
	limKeyCols = map[string]string{"HITS": "count", "OF LIMIT": "count", "REFUSED": "refused", "TTL": "ttl_ms"}
	jobCols    = map[string]string{"WAITING": "waiting", "LATENCY": "latency_ms", "ACTIVE": "active", "SCHEDULED": "scheduled", "DUE": "due",
		"LAG": "oldest_due_age_ms", "NEXT IN": "next_due_in_ms", "RETRY": "retry", "DEAD": "dead", "DONE": "completed"}
	// bloomCols: a figure's cell is its value's; the false-positive cell is the rate now and the target.
	bloomCols = map[string]string{"ADDED": "added", "ELEMENTS": "elements", "FILL": "fill_ratio",
		"FALSE POS/TARGET": "false_positive_rate / target_error_rate", "SUB-FILTERS": "sub_filters", "MEMORY": "memory_bytes"}
	throughputCols = map[string]string{"RUN/S": "processed_per_sec", "FAILED/S": "failed_per_sec", "TODAY": "today", "FAILED": "failed_today",
		"TOTAL": "processed_total", "FAILED TOTAL": "failed_total"}
)

// isHeader reports whether a line is a table's header: its cells after the first are titles in
// capitals.
func isHeader(cells []screenCell) bool {
	if len(cells) < 2 {
		return false
	}
	for _, c := range cells[1:] {
		if strings.ToUpper(c.text) != c.text || !upperLetter.MatchString(c.text) {
			return false
		}
	}
	return true
}

// checkTables finds every table on a screen and holds each of its figure cells to the JSON
// field it shows; a 0 in a column no field accounts for fails.
func checkTables(t *testing.T, where, screen string, doc map[string]any) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	for i := 0; i < len(lines); i++ {
		header := screenCells(lines[i])
		if !isHeader(header) {
			continue
		}
		for i+1 < len(lines) {
			row := screenCells(lines[i+1])
			if len(row) < 2 || isHeader(row) {
				break
			}
			i++
			name := row[0].text
			if header[0].text == "BLOOM" || header[0].text == "FILTER" { // a filter's row: its entry is named on its first row only
				name = cellUnder(header, row, "FILTER")
			}
			obj, cols := rowObject(doc, header[0].text, name)
			for _, c := range row[1:] {
				col := underHeader(header, c)
				w := where + " " + header[0].text + " " + name + " " + col
				field, ok := cols[col]
				switch {
				case ok && obj != nil && strings.Contains(field, " / "): // two figures in one cell
					fields, texts := strings.Split(field, " / "), strings.Split(c.text, " / ")
					if len(texts) != len(fields) {
						t.Errorf("%s: %q is not %d figures", w, c.text, len(fields))
						continue
					}
					for i := range fields {
						checkScreenCell(t, w, obj, fields[i], texts[i])
					}
				case ok && obj != nil:
					checkScreenCell(t, w, obj, field, c.text)
				case zeroCell.MatchString(c.text):
					t.Errorf("%s: shows %q, which no field of the Snapshot accounts for", w, c.text)
				}
			}
		}
	}
}

// rowObject finds the JSON object a table's row shows, by the table's first title, and the
// fields of its columns.
func rowObject(doc map[string]any, table, name string) (map[string]any, map[string]string) {
	switch {
	case table == "BLOOM" || table == "FILTER": // the filters' table, its entry's column dropped when narrow
		for _, b := range items(doc, "blooms") {
			filters, _ := b.(map[string]any)["filters"].([]any)
			if f := findObj(filters, "key", name); f != nil {
				return f, bloomCols
			}
		}
	case table == "LIMITER":
		return findObj(items(doc, "limiters"), "name", name), limiterCols
	case table == "KEY":
		for _, l := range items(doc, "limiters") {
			top, _ := l.(map[string]any)["top"].([]any)
			if k := findObj(top, "key", name); k != nil {
				return k, limKeyCols
			}
		}
	case strings.HasPrefix(table, "JOBS RUN "): // a job library's counts of the jobs it ran
		entry := findObj(items(doc, "job_queues"), "name", strings.TrimPrefix(table, "JOBS RUN "))
		rows, _ := entry["throughput"].([]any)
		row := findObj(rows, "queue", strings.TrimSuffix(name, "all queues"))
		if row == nil {
			return nil, nil
		}
		row = maps.Clone(row)
		row["today"], row["failed_today"] = nil, nil
		if days, _ := row["days"].([]any); len(days) > 0 {
			today := days[0].(map[string]any)
			row["today"], row["failed_today"] = today["processed"], today["failed"]
		}
		return row, throughputCols
	case len(strings.Fields(table)) == 2: // a job library's table: "SIDEKIQ sk"
		entry := findObj(items(doc, "job_queues"), "name", strings.Fields(table)[1])
		if name == "(all queues)" {
			shared, _ := entry["shared"].(map[string]any)
			return shared, jobCols
		}
		queues, _ := entry["queues"].([]any)
		return findObj(queues, "queue", strings.TrimSuffix(name, " (paused)")), jobCols
	}
	return nil, nil
}

// checkScreenCell holds a cell to its field: 0 only where the field is 0, "—" (or another
// word for "not there") where it is null.
func checkScreenCell(t *testing.T, where string, obj map[string]any, field, text string) {
	t.Helper()
	v, ok := obj[field]
	if fig, isFigure := v.(map[string]any); isFigure { // a Bloom filter's figure: its value
		v = fig["value"]
	}
	n, isNum := v.(json.Number)
	switch {
	case !ok:
		t.Errorf("%s: no field %q beside the cell %q", where, field, text)
	case v == nil && obj["rate_measuring"] != nil && strings.HasPrefix(text, "measuring"):
		// a rate not measured yet, which says so and for how long
	case v == nil && !absentCell[strings.TrimPrefix(text, "~")]:
		t.Errorf("%s: shows %q where the Snapshot's %s is null (not kept)", where, text, field)
	case zeroCell.MatchString(text) && (!isNum || n.String() != "0"):
		t.Errorf("%s: shows %q where the Snapshot's %s is %v", where, text, field, v)
	}
}

// cellUnder is the text of row's cell under the header cell title, or "".
func cellUnder(header, row []screenCell, title string) string {
	for _, c := range row {
		if underHeader(header, c) == title {
			return c.text
		}
	}
	return ""
}

func items(doc map[string]any, key string) []any {
	l, _ := doc[key].([]any)
	return l
}

func findObj(list []any, key, value string) map[string]any {
	for _, it := range list {
		if m, _ := it.(map[string]any); m != nil && m[key] == value {
			return m
		}
	}
	return nil
}
