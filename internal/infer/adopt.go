package infer

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// Adopter is the scanner.Inferrer of a command run with no config: it adopts discover's entries
// of high and medium confidence as if they were configured. Low ones are left for the Unclaimed
// view and the report to list. An Adopter is safe for use by several goroutines: the sweep
// adopts while the console's session adds what the operator claims.
type Adopter struct {
	cluster bool // the target is a Redis Cluster: an entry must keep its windows in one slot

	mu      sync.Mutex
	cfg     *config.Config    // the config in use, with every entry adopted or added so far
	groups  []discover.Group  // the groups adopted, each with the entry as adopted, in order
	refused map[string]string // by group pattern: why the config refused its entry
}

// New returns an Adopter of entries added to cfg, the settings in use (with no entries of its own
// when no config was given).
func New(cfg *config.Config, cluster bool) *Adopter {
	return &Adopter{cfg: cfg, cluster: cluster, refused: map[string]string{}}
}

// Trusted reports whether g's entry is one an Adopter adopts. It has one, of high or medium
// confidence, with no setting discover could only guess. (A limiter's limit is not in its keys:
// counted against a guess, its keys at or over the limit would be made up.)
func Trusted(g discover.Group) bool {
	return g.Entry != nil && (g.Confidence == discover.High || g.Confidence == discover.Medium) && len(g.Entry.Guessed) == 0
}

// Adopt adopts the trusted entries of r's groups not adopted or refused before, renamed where a
// name is taken. An entry the config refuses is remembered with why, and not tried again.
//
// Until the sweep is complete, some entries wait. An entry of keys named one by one (a pattern with
// no placeholder) waits, unless it is a delay queue of one key or a library's keys. A lone key of a
// lock or a counter is most often the first of many, which a later turn's group takes in one
// pattern. A list queue of one key waits too (oneList). So does a group named as a job library's
// keys under a prefix whose library was not found yet (Group.MayBeLibrary). An example is BullMQ's
// acme:<queue>:wait lists seen before a meta hash of acme's. At the sweep's end its library's group
// has taken it, or it is adopted as what it is.
func (a *Adopter) Adopt(r discover.Result, complete bool) scanner.Adoption {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out scanner.Adoption
	groups := r.Avoiding(a.cfg.Names()).Groups
	listed := a.listPrefixes(groups)
	for _, g := range groups {
		if !Trusted(g) || a.seen(g) || g.AwaitsMark() || !complete && (mayWiden(*g.Entry) || g.MayBeLibrary() || oneList(*g.Entry)) {
			continue
		}
		if underListPrefix(*g.Entry, listed) {
			a.refused[g.Pattern] = "a list under the global_keyprefix of a Celery entry: kombu names its queues' lists there, and that entry reads them"
			continue
		}
		add, err := a.parse(*g.Entry)
		if err != nil {
			a.refused[g.Pattern] = err.Error()
			continue
		}
		a.cfg = a.cfg.WithEntries(add)
		g.Evidence = append(slices.Clone(g.Evidence), fmt.Sprintf("adopted when the sweep had seen %s of its keys; the console and snapshot count them all", format.Commas(g.Keys)))
		a.groups = append(a.groups, g)
		out.Families = slices.Concat(out.Families, add.Counters)
		out.Structures = out.Structures.With(add.Structures)
		out.Entries = append(out.Entries, *g.Entry)
	}
	return out
}

// listPrefixes are the prefixes of the entries in force, and of those groups propose, of a
// library that names its queues' lists after the queue alone (Celery's global_keyprefixes).
// a.mu is held.
func (a *Adopter) listPrefixes(groups []discover.Group) []string {
	var out []string
	for _, j := range a.cfg.Structures.JobQueues {
		if j.Source.Layout.ListsNamedAfterQueues() {
			out = append(out, j.Source.Prefix)
		}
	}
	for _, g := range groups {
		if g.Entry != nil && Trusted(g) && g.Entry.Table == "job_queue" && jobs.Layout(g.Entry.Layout).ListsNamedAfterQueues() {
			out = append(out, g.Entry.Prefix)
		}
	}
	return out
}

// underListPrefix reports whether e is a list queue of one key under one of those prefixes (a
// global_keyprefix, not the default none). kombu names its queues' lists there, and the Celery
// entry reads them. So the list's entry would count a Celery queue a second time.
func underListPrefix(e discover.Entry, prefixes []string) bool {
	return e.Table == "list_queue" && e.Key != "" &&
		slices.ContainsFunc(prefixes, func(p string) bool { return p != "" && strings.HasPrefix(e.Key, p) })
}

// oneList reports whether e is a list queue of one key. Such a list may be a job library's queue
// whose marks the sweep has not met yet. (kombu names a queue's list after the queue, under its
// global_keyprefix, and only its exchange's binding says so.) So it waits for the sweep's end, when
// that library's group has taken it if it is theirs.
func oneList(e discover.Entry) bool { return e.Table == "list_queue" && e.Key != "" }

// mayWiden reports whether e names its keys by a literal pattern: a shape of which only one
// key has been seen, which more keys of the same shape would widen to a placeholder.
func mayWiden(e discover.Entry) bool {
	return e.Pattern != "" && !strings.Contains(e.Pattern, "<")
}

// Add parses entry, one the operator chose, as the config in use would read it, and keeps it
// with the entries adopted (so no later one takes its name, and a file written holds it, in
// force). Nothing is kept on an error.
func (a *Adopter) Add(entry discover.Entry) (*config.Entries, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	add, err := a.parse(entry)
	if err != nil {
		return nil, err
	}
	a.cfg = a.cfg.WithEntries(add)
	pattern := entry.Pattern
	if pattern == "" {
		pattern = entry.Key
	}
	a.groups = append(a.groups, discover.Group{Pattern: pattern, Kind: discover.Kind(entry.Table), Confidence: discover.Medium,
		Evidence: []string{"added in the console by the operator"}, Examples: []string{}, Entry: &entry})
	return add, nil
}

// parse reads entry as an addition to the config in use. a.mu is held.
func (a *Adopter) parse(entry discover.Entry) (*config.Entries, error) {
	add, err := a.cfg.ParseEntries("inferred", []byte(entry.TOML()))
	if err == nil && a.cluster {
		err = add.CheckCluster()
	}
	return add, err
}

// seen reports whether g was adopted or refused before. a.mu is held.
func (a *Adopter) seen(g discover.Group) bool {
	if _, ok := a.refused[g.Pattern]; ok {
		return true
	}
	return slices.ContainsFunc(a.groups, func(h discover.Group) bool { return h.Pattern == g.Pattern })
}

// Groups returns the groups adopted or added, in order, each with its entry as adopted.
func (a *Adopter) Groups() []discover.Group {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.groups)
}

// Refused returns, by group pattern, why the config refused a trusted group's entry.
func (a *Adopter) Refused() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]string, len(a.refused))
	for k, v := range a.refused {
		out[k] = v
	}
	return out
}

// Config returns the config in use with every entry adopted or added so far.
func (a *Adopter) Config() *config.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}
