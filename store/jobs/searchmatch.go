package jobs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Match is what a search looks for in a task's payload (Task.Payload): a substring of it, or a
// JSON field equal to a value. ParseMatch reads it from the operator's text.
type Match struct {
	text  string   // the substring; "" for a field match
	path  []string // the field's dotted path
	value string
}

// fieldPath is the left side of a field match: dotted names and array indexes.
var fieldPath = regexp.MustCompile(`^[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+)*$`)

// ParseMatch reads a search: `path=value` is a JSON field match (a dotted path into the payload's
// JSON, a number indexing an array: `args.0.user_id=42`), any other text a substring of the
// payload; text in double quotes is always a substring (`"a=b"`).
func ParseMatch(s string) (Match, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	} else if path, value, ok := strings.Cut(s, "="); ok && fieldPath.MatchString(path) {
		return Match{path: strings.Split(path, "."), value: value}, nil
	}
	if s == "" {
		return Match{}, fmt.Errorf("store: an empty search matches every task")
	}
	return Match{text: s}, nil
}

// Field reports whether m is a JSON field match.
func (m Match) Field() bool { return m.path != nil }

// String is the search as ParseMatch reads it.
func (m Match) String() string {
	if m.Field() {
		return strings.Join(m.path, ".") + "=" + m.value
	}
	if strings.Contains(m.text, "=") {
		return `"` + m.text + `"`
	}
	return m.text
}

// matchOutcome is what Match.test found of one task.
type matchOutcome int

const (
	matchNo         matchOutcome = iota
	matchYes                     // the task matches
	matchUnreadable              // its payload could not be read (its job hash gone)
	matchNotJSON                 // a field match on a payload with no JSON document
)

// test matches t's payload. The JSON document of a field match is the payload when it is JSON
// (Sidekiq's job: `args.0.user_id`), or, for a payload that is a name, a space and JSON (BullMQ's
// name and data, asynq's type and payload, Celery's task name and body), {"name": ..., "data":
// ...} (`data.email`).
func (m Match) test(t Task) matchOutcome {
	if t.PayloadBytes < 0 {
		return matchUnreadable
	}
	if !m.Field() {
		if strings.Contains(t.Payload, m.text) {
			return matchYes
		}
		return matchNo
	}
	doc, ok := payloadJSON(t.Payload)
	if !ok {
		return matchNotJSON
	}
	for _, seg := range m.path {
		switch node := doc.(type) {
		case map[string]any:
			if doc, ok = node[seg]; !ok {
				return matchNo
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return matchNo
			}
			doc = node[i]
		default:
			return matchNo
		}
	}
	if jsonEquals(doc, m.value) {
		return matchYes
	}
	return matchNo
}

// payloadJSON is the JSON document of a payload (see Match.test).
func payloadJSON(p string) (any, bool) {
	if v, ok := decodeJSON(p); ok {
		return v, true
	}
	name, rest, ok := strings.Cut(p, " ")
	if !ok {
		return nil, false
	}
	if v, ok := decodeJSON(rest); ok {
		return map[string]any{"name": name, "data": v}, true
	}
	return nil, false
}

func decodeJSON(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] != '{' && s[0] != '[' {
		return nil, false
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// jsonEquals reports whether a JSON value is value: a string equal to it, a number equal to it
// as a number (42 and 42.0), true, false or null by name, an object or array by its compact JSON.
func jsonEquals(v any, value string) bool {
	switch v := v.(type) {
	case string:
		return v == value
	case json.Number:
		if string(v) == value {
			return true
		}
		a, err1 := strconv.ParseFloat(string(v), 64)
		b, err2 := strconv.ParseFloat(value, 64)
		return err1 == nil && err2 == nil && !math.IsNaN(a) && a == b
	case bool:
		return strconv.FormatBool(v) == value
	case nil:
		return value == "null"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var want bytes.Buffer
	return json.Compact(&want, []byte(value)) == nil && bytes.Equal(raw, want.Bytes())
}
