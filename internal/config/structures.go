package config

import (
	"hourglass/scanner"
	"hourglass/store"
)

// structures builds the [[delay_queue]], [[list_queue]], [[limiter]], [[unique]], [[bitmap]] and
// [[lock]] sections.
func (c *checker) structures(root table) scanner.Structures {
	names := map[string]int{} // every structure's name -> its line: one name, one thing
	return scanner.Structures{
		DelayQueues: c.delayQueues(root, names),
		ListQueues:  c.listQueues(root, names),
		Limiters:    c.limiters(root, names),
		Uniques:     c.uniques(root),
		Locks:       c.locks(root, names),
	}
}

// named reads a structure's name, which must be there and be the only one of its header.
func (c *checker) named(t table, header string, names map[string]int) (string, bool) {
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

// required reads a string key that must be there.
func (c *checker) required(t table, header, key string) (string, bool) {
	if _, present := t.m[key]; !present {
		c.fail(t.path+"."+key, "missing: every %s needs a %s", header, key)
		return "", false
	}
	return c.str(t, key)
}

// keyPattern reads a structure's required key pattern (no <window>).
func (c *checker) keyPattern(t table, header string) (*store.Pattern, bool) {
	text, ok := c.required(t, header, "pattern")
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

func (c *checker) delayQueues(root table, names map[string]int) []scanner.DelayQueueSpec {
	var out []scanner.DelayQueueSpec
	for _, t := range c.arrayTables(root, "delay_queue") {
		c.onlyKeys(t, "[[delay_queue]]", "name", "key", "pattern", "score_unit")
		name, ok1 := c.named(t, "[[delay_queue]]", names)
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
			pattern, ok2 = c.keyPattern(t, "[[delay_queue]]")
		default:
			key, ok2 = c.required(t, "[[delay_queue]]", "key")
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
			out = append(out, scanner.DelayQueueSpec{Name: name, Key: key, Pattern: pattern, Unit: unit})
		}
	}
	return out
}

func (c *checker) listQueues(root table, names map[string]int) []scanner.ListQueueSpec {
	var out []scanner.ListQueueSpec
	for _, t := range c.arrayTables(root, "list_queue") {
		name, key, ok := namedWith(c, t, "[[list_queue]]", names, "key", func() (string, bool) {
			return c.required(t, "[[list_queue]]", "key")
		})
		if ok {
			out = append(out, scanner.ListQueueSpec{Name: name, Key: key})
		}
	}
	return out
}

// namedWith checks a table that takes a name and one other key, read by value; ok is false
// unless both are good. Both are read whatever the other is, so every problem is reported.
func namedWith[V any](c *checker, t table, header string, names map[string]int, key string, value func() (V, bool)) (string, V, bool) {
	c.onlyKeys(t, header, "name", key)
	name, nameOK := c.named(t, header, names)
	v, valueOK := value()
	return name, v, nameOK && valueOK
}

func (c *checker) limiters(root table, names map[string]int) []scanner.LimiterSpec {
	var out []scanner.LimiterSpec
	for _, t := range c.arrayTables(root, "limiter") {
		c.onlyKeys(t, "[[limiter]]", "name", "pattern", "kind", "window", "limit")
		start := len(c.errs)
		name, _ := c.named(t, "[[limiter]]", names)
		p, _ := c.keyPattern(t, "[[limiter]]")
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
			out = append(out, scanner.LimiterSpec{LimiterSpec: spec, Pattern: p})
		}
	}
	return out
}

// uniques builds [[unique]] (HyperLogLogs) and [[bitmap]] tables: windowed like counters.
func (c *checker) uniques(root table) []scanner.UniqueSpec {
	var out []scanner.UniqueSpec
	firstLine := map[string]int{}
	for _, kind := range []struct {
		name string
		kind store.UniqueKind
	}{{"unique", store.HyperLogLog}, {"bitmap", store.Bitmap}} {
		for _, t := range c.arrayTables(root, kind.name) {
			if f := c.counter(t, firstLine, "[["+kind.name+"]]"); f != nil {
				out = append(out, scanner.UniqueSpec{Kind: kind.kind, Family: f})
			}
		}
	}
	return out
}

func (c *checker) locks(root table, names map[string]int) []scanner.LockSpec {
	var out []scanner.LockSpec
	for _, t := range c.arrayTables(root, "lock") {
		name, p, ok := namedWith(c, t, "[[lock]]", names, "pattern", func() (*store.Pattern, bool) {
			return c.keyPattern(t, "[[lock]]")
		})
		if ok {
			out = append(out, scanner.LockSpec{Name: name, Pattern: p})
		}
	}
	return out
}
