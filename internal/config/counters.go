package config

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// counters builds the [[counter]] families.
func (c *checker) counters(root table) []*store.Family {
	var fams []*store.Family
	firstLine := map[string]int{} // family name -> line of its name key
	for _, t := range c.arrayTables(root, "counter") {
		if f := c.counter(t, firstLine, "[[counter]]"); f != nil {
			fams = append(fams, f)
		}
	}
	return fams
}

// arrayTables returns the [[name]] tables of root.
func (c *checker) arrayTables(root table, name string) []table {
	var tables []table
	switch v := root.m[name].(type) {
	case nil:
		return nil
	case []map[string]any:
		for i, m := range v {
			tables = append(tables, table{name + "[" + strconv.Itoa(i) + "]", m})
		}
	case []any: // name = [{...}, {...}]: legal TOML, so accepted
		for i, e := range v {
			path := name + "[" + strconv.Itoa(i) + "]"
			if m, ok := e.(map[string]any); ok {
				tables = append(tables, table{path, m})
			} else {
				c.fail(path, "want a table, got %s", describe(e))
			}
		}
	default:
		c.fail(name, "want [[%s]] tables, got %s", name, describe(v))
	}
	return tables
}

// counter checks one [[counter]] table (or [[unique]], [[bitmap]]: windowed the same way) and
// builds its family; nil if anything is wrong.
func (c *checker) counter(t table, firstLine map[string]int, header string) *store.Family {
	start := len(c.errs)
	c.onlyKeys(t, header, "name", "pattern", "hour_format", "day_format", "hour_retention", "day_retention", "timezone", "exclude")
	at := func(key string) string { return t.path + "." + key }
	var spec store.FamilySpec
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &spec.Name}, {"pattern", &spec.Pattern}} {
		if _, present := t.m[f.key]; !present {
			c.fail(at(f.key), "missing: every %s needs a %s", header, f.key)
		}
		*f.dst, _ = c.str(t, f.key)
	}
	c.windows(t, &spec)
	spec.Exclude = c.excludes(t).Strings()
	spec.Location = c.defaultZone
	if loc, _, ok := c.zone(t, "timezone"); ok {
		spec.Location = loc
	}
	if spec.Name != "" {
		if line, dup := firstLine[spec.Name]; dup {
			c.fail(at("name"), "duplicate family name %q (first declared at line %d)", spec.Name, line)
		} else {
			firstLine[spec.Name] = c.lines.lineOf(at("name"))
		}
		c.clash(at("name"), header, spec.Name)
	}
	fam, err := store.NewFamily(spec)
	var se *store.SpecError
	switch {
	case errors.As(err, &se):
		if !reportedPair(c.errs[start:], se.Field) {
			c.fail(at(se.Field), "%s", strings.TrimPrefix(se.Msg, se.Field+": "))
		}
		return nil
	case err != nil:
		c.fail(t.path, "%v", err)
		return nil
	}
	c.patternLine[indexSuffix.ReplaceAllString(t.path, "")+":"+spec.Name] = c.lines.lineOf(at("pattern"))
	if len(c.errs) > start {
		return nil
	}
	return fam
}

// windows reads a windowed table's hour and day formats and retentions into spec. Format and
// retention come in pairs; checking them here rather than leaving it to store.NewFamily points at
// the line to edit and reports every pair, not just the first.
func (c *checker) windows(t table, spec *store.FamilySpec) {
	at := func(key string) string { return t.path + "." + key }
	var ok bool
	formats := 0
	for _, g := range []struct {
		gran, example string
		format        *string
		retention     *time.Duration
	}{
		{"hour", "yyyyMMddHH", &spec.HourFormat, &spec.HourRetention},
		{"day", "yyyyMMdd", &spec.DayFormat, &spec.DayRetention},
	} {
		fkey, rkey := g.gran+"_format", g.gran+"_retention"
		_, badFormat := t.m[fkey]
		*g.format, ok = c.str(t, fkey)
		badFormat = badFormat && !ok
		_, hasRetention := t.m[rkey]
		*g.retention, ok = c.durationIn(t, rkey, 0, maxRetention)
		switch { // a retention that is there but wrong is reported by durationIn
		case *g.format != "" && !hasRetention:
			c.fail(at(fkey), "%s windows need %s (how long a window is kept after it ends), e.g. %s = \"48h\"",
				g.gran, rkey, rkey)
		case *g.format == "" && ok && !badFormat:
			c.fail(at(rkey), "set without %s: add %s = %q or remove it", fkey, fkey, g.example)
		}
		if *g.format != "" || badFormat {
			formats++
		}
	}
	if formats == 0 {
		c.fail(at("hour_format"), "a counter family needs hour_format, day_format or both")
	}
}

// reportedPair reports whether errs already hold a problem with field, or with the other half of
// its format/retention pair: store.NewFamily stops at the first problem it sees, which is then
// often one this file has already explained better.
func reportedPair(errs []*Error, field string) bool {
	gran, _, _ := strings.Cut(field, "_")
	for _, e := range errs {
		k := e.Key[strings.LastIndexByte(e.Key, '.')+1:] // counter.day_format, bitmap.day_format...
		if k == field || (gran == "hour" || gran == "day") && strings.HasPrefix(k, gran+"_") {
			return true
		}
	}
	return false
}
