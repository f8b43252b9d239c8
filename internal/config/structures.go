package config

import (
	"hourglass/scanner"
	"hourglass/store"
)

// structures builds the [[delay_queue]], [[list_queue]], [[limiter]], [[unique]], [[bitmap]] and
// [[lock]] sections.
func (c *checker) structures(root table) scanner.Structures {
	var s scanner.Structures
	names := map[string]int{} // every structure's name -> its line: one name, one thing
	named := func(t table, header string) (string, bool) {
		name, ok := c.str(t, "name")
		if _, present := t.m["name"]; !present {
			c.fail(t.path+".name", "missing: every %s needs a name", header)
			return "", false
		}
		if !ok {
			return "", false
		}
		if line, dup := names[header+name]; dup {
			c.fail(t.path+".name", "duplicate %s name %q (first declared at line %d)", header, name, line)
			return "", false
		}
		names[header+name] = c.lines.lineOf(t.path + ".name")
		return name, true
	}
	required := func(t table, header, key string) (string, bool) {
		if _, present := t.m[key]; !present {
			c.fail(t.path+"."+key, "missing: every %s needs a %s", header, key)
			return "", false
		}
		return c.str(t, key)
	}
	keyPattern := func(t table, header string) (*store.Pattern, bool) {
		text, ok := required(t, header, "pattern")
		if !ok {
			return nil, false
		}
		p, err := store.ParseKeyPattern(text)
		if err != nil {
			c.fail(t.path+".pattern", "%v", err)
			return nil, false
		}
		return p, true
	}

	for _, t := range c.arrayTables(root, "delay_queue") {
		c.onlyKeys(t, "[[delay_queue]]", "name", "key", "pattern", "score_unit")
		name, ok1 := named(t, "[[delay_queue]]")
		var key string
		var pattern *store.Pattern
		_, hasKey := t.m["key"]
		_, hasPattern := t.m["pattern"]
		ok2 := true
		switch {
		case hasKey && hasPattern:
			c.fail(t.path+".pattern", "give key (one queue) or pattern (a queue per matching key), not both")
			ok2 = false
		case hasPattern:
			pattern, ok2 = keyPattern(t, "[[delay_queue]]")
		default:
			key, ok2 = required(t, "[[delay_queue]]", "key")
		}
		unit := store.Milliseconds
		if u, ok := c.str(t, "score_unit"); ok {
			switch u {
			case "ms":
			case "s":
				unit = store.Seconds
			default:
				c.fail(t.path+".score_unit", "want \"ms\" or \"s\" (the unit of the due times in the scores), got %q", u)
			}
		}
		if ok1 && ok2 {
			s.DelayQueues = append(s.DelayQueues, scanner.DelayQueueSpec{Name: name, Key: key, Pattern: pattern, Unit: unit})
		}
	}
	for _, t := range c.arrayTables(root, "list_queue") {
		c.onlyKeys(t, "[[list_queue]]", "name", "key")
		name, ok1 := named(t, "[[list_queue]]")
		key, ok2 := required(t, "[[list_queue]]", "key")
		if ok1 && ok2 {
			s.ListQueues = append(s.ListQueues, scanner.ListQueueSpec{Name: name, Key: key})
		}
	}
	for _, t := range c.arrayTables(root, "limiter") {
		c.onlyKeys(t, "[[limiter]]", "name", "pattern", "kind", "window", "limit")
		start := len(c.errs)
		name, _ := named(t, "[[limiter]]")
		p, _ := keyPattern(t, "[[limiter]]")
		spec := store.LimiterSpec{Name: name, Kind: store.Sliding}
		if p != nil {
			spec.Pattern = p.String()
		}
		if k, ok := c.str(t, "kind"); ok {
			switch k {
			case "sliding":
			case "fixed":
				spec.Kind = store.Fixed
			default:
				c.fail(t.path+".kind", "want \"sliding\" or \"fixed\", got %q", k)
			}
		}
		if d, ok := c.duration(t, "window"); ok {
			if d < 1e6 {
				c.fail(t.path+".window", "must be at least 1ms")
			}
			spec.Window = d
		} else if _, present := t.m["window"]; !present {
			c.fail(t.path+".window", "missing: every [[limiter]] needs a window, e.g. window = \"1m\"")
		}
		if n, ok := c.integer(t, "limit"); ok {
			if n < 1 {
				c.fail(t.path+".limit", "must be at least 1, got %d", n)
			}
			spec.Limit = int64(n)
		} else if _, present := t.m["limit"]; !present {
			c.fail(t.path+".limit", "missing: every [[limiter]] needs a limit (hits allowed per window)")
		}
		if len(c.errs) == start {
			s.Limiters = append(s.Limiters, scanner.LimiterSpec{LimiterSpec: spec, Pattern: p})
		}
	}
	firstLine := map[string]int{}
	for _, kind := range []struct {
		name string
		kind store.UniqueKind
	}{{"unique", store.HyperLogLog}, {"bitmap", store.Bitmap}} {
		for _, t := range c.arrayTables(root, kind.name) {
			if f := c.counter(t, firstLine, "[["+kind.name+"]]"); f != nil {
				s.Uniques = append(s.Uniques, scanner.UniqueSpec{Kind: kind.kind, Family: f})
			}
		}
	}
	for _, t := range c.arrayTables(root, "lock") {
		c.onlyKeys(t, "[[lock]]", "name", "pattern")
		name, ok1 := named(t, "[[lock]]")
		p, ok2 := keyPattern(t, "[[lock]]")
		if ok1 && ok2 {
			s.Locks = append(s.Locks, scanner.LockSpec{Name: name, Pattern: p})
		}
	}
	return s
}
