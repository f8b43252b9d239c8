package config

import (
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// structures builds the [[delay_queue]], [[list_queue]], [[limiter]], [[unique]], [[bitmap]] and
// [[lock]] and [[bloom]] sections.
func (c *checker) structures(root table) scanner.Structures {
	names := map[string]int{} // every structure's name -> its line: one name, one thing
	return scanner.Structures{
		DelayQueues: c.delayQueues(root, names),
		ListQueues:  c.listQueues(root, names),
		Limiters:    c.limiters(root, names),
		Uniques:     c.uniques(root),
		Locks:       c.locks(root, names),
		JobQueues:   c.jobQueues(root, names),
		Blooms:      c.blooms(root, names),
	}
}

// excludes reads a table's exclude globs.
func (c *checker) excludes(t table) store.Globs { return c.globs(t, "exclude") }

// globs reads a list of globs at key.
func (c *checker) globs(t table, key string) store.Globs {
	list, ok := c.stringList(t, key)
	if !ok {
		return store.Globs{}
	}
	g, err := store.ParseGlobs(list)
	if err != nil {
		c.fail(t.path+"."+key, "%v", err)
	}
	return g
}

// keyOrPattern reads a queue's key (one queue) or pattern (a queue per matching key).
func (c *checker) keyOrPattern(t table, header string) (string, *store.Pattern, bool) {
	_, hasKey := t.m["key"]
	_, hasPattern := t.m["pattern"]
	switch {
	case hasKey && hasPattern:
		c.fail(t.path+".pattern", "give key (one queue) or pattern (a queue per matching key), not both")
		return "", nil, false
	case hasPattern:
		p, ok := c.keyPattern(t, header)
		return "", p, ok
	}
	key, ok := c.required(t, header, "key")
	return key, nil, ok
}

// companion reads a queue's in-flight or processing key template; absent, hourglass's own.
func (c *checker) companion(t table, key string, pattern *store.Pattern) store.Companion {
	text, ok := c.str(t, key)
	if !ok {
		return store.Companion{}
	}
	comp := store.ParseCompanion(text)
	if pattern != nil && text != "" && !comp.PerKey() {
		c.fail(t.path+"."+key, "a pattern's queues each need their own %s: put %s in it, e.g. \"%s:%s\"",
			key, store.KeyPlaceholder, store.KeyPlaceholder, key)
	}
	return comp
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
	if c.clash(t.path+".name", header, name) {
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

// entries reads every [[kind]] table of root: its keys checked against keys, then build makes
// its entry, which is kept only when reading the table found no error.
func entries[T any](c *checker, root table, kind string, keys []string, build func(t table, header string) T) []T {
	var out []T
	header := "[[" + kind + "]]"
	for _, t := range c.arrayTables(root, kind) {
		c.onlyKeys(t, header, keys...)
		start := len(c.errs)
		if e := build(t, header); len(c.errs) == start {
			out = append(out, e)
		}
	}
	return out
}

func (c *checker) delayQueues(root table, names map[string]int) []scanner.DelayQueueSpec {
	keys := []string{"name", "key", "pattern", "score_unit", "inflight", "exclude"}
	return entries(c, root, "delay_queue", keys, func(t table, header string) scanner.DelayQueueSpec {
		name, _ := c.named(t, header, names)
		key, pattern, _ := c.keyOrPattern(t, header)
		q := scanner.DelayQueueSpec{Name: name, Key: key, Pattern: pattern, Unit: store.AutoUnit,
			InFlight: c.companion(t, "inflight", pattern), Exclude: c.excludes(t)}
		if u, ok := c.str(t, "score_unit"); ok {
			unit, err := store.ParseScoreUnit(u)
			if err != nil {
				c.fail(t.path+".score_unit", "%v", err)
			}
			q.Unit = unit
		}
		return q
	})
}

func (c *checker) listQueues(root table, names map[string]int) []scanner.ListQueueSpec {
	keys := []string{"name", "key", "pattern", "processing", "exclude"}
	return entries(c, root, "list_queue", keys, func(t table, header string) scanner.ListQueueSpec {
		name, _ := c.named(t, header, names)
		key, pattern, _ := c.keyOrPattern(t, header)
		return scanner.ListQueueSpec{Name: name, Key: key, Pattern: pattern,
			Processing: c.companion(t, "processing", pattern), Exclude: c.excludes(t)}
	})
}

// jobQueues reads [[job_queue]]: a job library's layout, its prefix and which of its queues.
func (c *checker) jobQueues(root table, names map[string]int) []scanner.JobQueueSpec {
	keys := []string{"name", "layout", "prefix", "queues", "exclude", "dead_max_jobs", "dead_timeout"}
	return entries(c, root, "job_queue", keys, func(t table, header string) scanner.JobQueueSpec {
		name, _ := c.named(t, header, names)
		spec := scanner.JobQueueSpec{Name: name, Exclude: c.excludes(t)}
		if text, ok := c.required(t, header, "layout"); ok {
			l, err := jobs.ParseLayout(text)
			if err != nil {
				c.fail(t.path+".layout", "%v", err)
			}
			spec.Source = jobs.Source{Layout: l, Prefix: l.DefaultPrefix()}
		}
		if p, ok := c.str(t, "prefix"); ok {
			spec.Source.Prefix = p
		}
		spec.Queues = c.globs(t, "queues")
		c.deadBounds(t, &spec.Source)
		return spec
	})
}

// deadBounds reads a Sidekiq entry's dead_max_jobs and dead_timeout (its app's Sidekiq options,
// which bound the dead set a kill trims); other layouts keep no such bound.
func (c *checker) deadBounds(t table, src *jobs.Source) {
	for _, key := range []string{"dead_max_jobs", "dead_timeout"} {
		if _, set := t.m[key]; set && !src.Layout.HasDeadBounds() {
			c.fail(joinPath(t.path, key), "is Sidekiq's option: layout %q keeps no dead set bound", src.Layout)
			return
		}
	}
	if n, ok := c.intIn(t, "dead_max_jobs", 1, 100_000_000); ok {
		src.DeadMax = int64(n)
	}
	if d, ok := c.durationIn(t, "dead_timeout", time.Minute, 100*365*24*time.Hour); ok {
		src.DeadTimeout = d
	}
}

func (c *checker) limiters(root table, names map[string]int) []scanner.LimiterSpec {
	keys := []string{"name", "layout", "pattern", "kind", "window", "limit", "burst", "exclude"}
	return entries(c, root, "limiter", keys, func(t table, header string) scanner.LimiterSpec {
		name, _ := c.named(t, header, names)
		ls := scanner.LimiterSpec{LimiterSpec: store.LimiterSpec{Name: name, Kind: store.Sliding}, Exclude: c.excludes(t)}
		if text, ok := c.str(t, "layout"); ok {
			l, err := limits.ParseLayout(text)
			if err != nil {
				c.fail(t.path+".layout", "%v", err)
			}
			ls.Layout = l
		}
		ls.Pattern = c.limiterPattern(t, ls.Layout)
		if ls.Pattern != nil {
			ls.LimiterSpec.Pattern = ls.Pattern.String()
		}
		c.limiterKind(t, &ls)
		c.limiterBounds(t, &ls)
		return ls
	})
}

// limiterPattern reads a limiter's pattern, which a library's layout may leave to its default.
func (c *checker) limiterPattern(t table, layout limits.Layout) *store.Pattern {
	if _, present := t.m["pattern"]; !present && layout != limits.Hourglass {
		p, err := store.ParseKeyPattern(layout.DefaultPattern())
		if err != nil {
			c.fail(t.path+".layout", "%v", err)
		}
		return p
	}
	p, _ := c.keyPattern(t, "[[limiter]]")
	return p
}

// limiterKind reads kind, which only hourglass's own limiters have: a library's layout says how
// its keys count.
func (c *checker) limiterKind(t table, ls *scanner.LimiterSpec) {
	k, ok := c.str(t, "kind")
	if !ok {
		return
	}
	switch {
	case ls.Layout != limits.Hourglass:
		c.fail(t.path+".kind", "kind is for hourglass's own limiters; layout %q says how its keys count", ls.Layout)
	case k == "fixed":
		ls.Kind = store.Fixed
	case k != "sliding":
		c.fail(t.path+".kind", "want \"sliding\" or \"fixed\", got %q", k)
	}
}

// limiterBounds reads window, limit and burst: required for hourglass's and the libraries' own
// limiters, except limits, whose keys spell their own.
func (c *checker) limiterBounds(t table, ls *scanner.LimiterSpec) {
	required := ls.Layout != limits.Limits
	if d, ok := c.durationIn(t, "window", minLimiterWindow, maxLimiterWindow); ok {
		ls.Window = d
	} else if _, present := t.m["window"]; !present && required {
		c.fail(t.path+".window", "missing: every [[limiter]] needs a window, e.g. window = \"1m\"")
	}
	if n, ok := c.intIn(t, "limit", 1, maxLimiterLimit); ok {
		ls.Limit = int64(n)
	} else if _, present := t.m["limit"]; !present && required {
		c.fail(t.path+".limit", "missing: every [[limiter]] needs a limit (hits allowed per window)")
	}
	if _, present := t.m["burst"]; present && ls.Layout != limits.RedisRate {
		c.fail(t.path+".burst", "burst is redis_rate's (layout = \"redis_rate\")")
	} else if n, ok := c.intIn(t, "burst", 1, maxLimiterLimit); ok {
		ls.Burst = int64(n)
	}
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
	return entries(c, root, "lock", []string{"name", "pattern", "exclude"}, func(t table, header string) scanner.LockSpec {
		name, _ := c.named(t, header, names)
		p, _ := c.keyPattern(t, header)
		return scanner.LockSpec{Name: name, Pattern: p, Exclude: c.excludes(t)}
	})
}

// blooms reads the [[bloom]] entries: a pattern of Bloom filters (ours, by their metadata hash,
// or RedisBloom's), with no <window>.
func (c *checker) blooms(root table, names map[string]int) []scanner.BloomSpec {
	return entries(c, root, "bloom", []string{"name", "pattern", "exclude"}, func(t table, header string) scanner.BloomSpec {
		name, _ := c.named(t, header, names)
		p, _ := c.keyPattern(t, header)
		return scanner.BloomSpec{Name: name, Pattern: p, Exclude: c.excludes(t)}
	})
}
