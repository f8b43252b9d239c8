package config

import (
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// entryTables are the tables ParseEntries takes: the entries that claim keys.
var entryTables = []string{"counter", "unique", "bitmap", "delay_queue", "list_queue", "limiter", "lock", "job_queue", "bloom"}

// Entries are config entries added to a config already in use, such as the console's session:
// counter families and structures, checked as that config's own would be.
type Entries struct {
	Counters   []*store.Family
	Structures scanner.Structures

	checked *Config // the entries alone, for CheckCluster's file:line
}

// ParseEntries validates data as entries added to cfg. data is a text of entry tables alone:
// [[counter]], [[unique]], [[bitmap]], [[delay_queue]], [[list_queue]], [[limiter]], [[lock]],
// [[job_queue]]. Windows are cut in cfg's time zone unless an entry names its own. A name cfg
// already gives an entry of the same table is refused, as a name declared twice in one file is.
// Errors are *Error and name name:line, the line counted in data.
func (cfg *Config) ParseEntries(name string, data []byte) (*Entries, error) {
	src, raw, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	c := &checker{file: name, lines: indexLines(src), patternLine: map[string]int{}, defaultZone: cfg.Timezone, taken: cfg.entryNames()}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(entryTables, k) {
			c.fail(k, "not an entry: only [[counter]], [[unique]], [[bitmap]], [[delay_queue]], [[list_queue]], [[limiter]], [[lock]], [[job_queue]] and [[bloom]] can be added")
		}
	}
	root := table{m: raw}
	e := &Entries{Counters: c.counters(root), Structures: c.structures(root)}
	if len(c.errs) > 0 {
		slices.SortStableFunc(c.errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, c.errs[0]
	}
	e.checked = &Config{Counters: e.Counters, Structures: e.Structures, file: name, patternLine: c.patternLine}
	return e, nil
}

// CheckCluster refuses, for a Redis Cluster, an entry whose keys the config would refuse there
// (see Config.CheckCluster).
func (e *Entries) CheckCluster() error { return e.checked.CheckCluster() }

// WithEntries returns a copy of cfg that also holds e's entries, in new slices: cfg is unchanged.
func (cfg *Config) WithEntries(e *Entries) *Config {
	out := *cfg
	out.Counters = slices.Concat(cfg.Counters, e.Counters)
	out.Structures = cfg.Structures.With(e.Structures)
	return &out
}

// Names are the names cfg gives its entries, of every table: an entry proposed or inferred must
// not repeat one.
func (cfg *Config) Names() map[string]bool {
	out := map[string]bool{}
	for k := range cfg.entryNames() {
		out[k[strings.Index(k, "]]")+2:]] = true
	}
	return out
}

// Bare returns a copy of cfg with its settings and none of its entries, marked Inferred: what a
// command that watches runs on when it is given an address and no config, its entries inferred
// from the keys.
func (cfg *Config) Bare() *Config {
	out := *cfg
	out.Counters, out.Structures, out.Inferred = nil, scanner.Structures{}, true
	return &out
}

// entryNames are the names cfg gives its entries, keyed as checker.taken reads them.
func (cfg *Config) entryNames() map[string]bool {
	names := map[string]bool{}
	for _, f := range cfg.Counters {
		names[takenKey("[[counter]]", f.Name())] = true
	}
	s := cfg.Structures
	for _, u := range s.Uniques {
		names[takenKey("[[unique]]", u.Family.Name())] = true
	}
	for _, q := range s.DelayQueues {
		names[takenKey("[[delay_queue]]", q.Name)] = true
	}
	for _, q := range s.ListQueues {
		names[takenKey("[[list_queue]]", q.Name)] = true
	}
	for _, l := range s.Limiters {
		names[takenKey("[[limiter]]", l.Name)] = true
	}
	for _, l := range s.Locks {
		names[takenKey("[[lock]]", l.Name)] = true
	}
	for _, j := range s.JobQueues {
		names[takenKey("[[job_queue]]", j.Name)] = true
	}
	for _, b := range s.Blooms {
		names[takenKey("[[bloom]]", b.Name)] = true
	}
	return names
}

// takenKey is the key of a name in checker.taken: [[unique]] and [[bitmap]] share their names,
// as in one file.
func takenKey(header, name string) string {
	if header == "[[bitmap]]" {
		header = "[[unique]]"
	}
	return header + name
}

// clash records a problem when name is one the config in use already gives an entry of header.
func (c *checker) clash(path, header, name string) bool {
	if !c.taken[takenKey(header, name)] {
		return false
	}
	c.fail(path, "the config in use already has a %s named %q: rename this one", header, name)
	return true
}

// Loads returns a loader of generated config text named name. It parses the text as a config file,
// and checks it for a cluster when cluster is set. On a refusal it reports the line the error
// names, with its key and message, so a generator can comment out what is refused.
func Loads(name string, cluster bool) func(text string) (int, string, error) {
	return LoadsFrom(name, cluster, 1)
}

// LoadsFrom is Loads, with the cluster check only for entries from line from on: the lines before
// are a file merged into the text, whose entries the command has already warned of.
func LoadsFrom(name string, cluster bool, from int) func(text string) (int, string, error) {
	return func(text string) (int, string, error) {
		cfg, err := Parse(name, []byte(text), nil)
		if err == nil && cluster {
			for _, p := range cfg.ClusterProblems() {
				if p.Line >= from {
					err = p
					break
				}
			}
		}
		if err == nil {
			return 0, "", nil
		}
		var ce *Error
		if !errors.As(err, &ce) {
			return 0, "", err
		}
		return ce.Line, strings.TrimPrefix(ce.Key+": ", ": ") + ce.Msg, err
	}
}
