package discover

import (
	"slices"
	"strings"

	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// Library is a job library or limiter library whose keys are recognised by their names, under
// the library's default prefix, or under a prefix found by its marks (prefixes.go).
type Library struct {
	Name    string
	Job     jobs.Layout   // for a job library
	Limiter limits.Layout // for a limiter library (not Hourglass)
	source  jobs.Source
	prefix  string     // a limiter library's key prefix
	cand    *candidate // for a prefix found by the library's marks
	// keyPrefix is what each of a job library's keys starts with (jobs.Source.KeyPrefix).
	keyPrefix string
}

// newLibrary is the job library of src.
func newLibrary(src jobs.Source) *Library {
	return &Library{Name: string(src.Layout), Job: src.Layout, source: src, keyPrefix: src.KeyPrefix()}
}

// key tells a library under one prefix from the same library under another.
func (l *Library) key() string { return l.Name + "\x00" + l.source.Prefix }

// Libraries are the job and limiter libraries hourglass reads, with their default prefixes.
// A job library whose keys are bare names anyone could have (Sidekiq's) is one only under a
// prefix its marks proved (prefixes.go), its default included (jobs.Layout.ByMarksOnly).
func Libraries() []Library {
	var out []Library
	for _, l := range jobs.Layouts {
		out = append(out, *newLibrary(jobs.Source{Layout: l, Prefix: l.DefaultPrefix()}))
	}
	for _, l := range []limits.Layout{limits.Limits, limits.RateLimiterFlexible, limits.RedisRate} {
		p := l.DefaultPattern()
		out = append(out, Library{Name: l.String(), Limiter: l, prefix: p[:strings.IndexByte(p, '<')]})
	}
	return out
}

// library returns the library whose key name is, if any, and whether name is where it registers
// its queues: a library under a prefix its marks proved first, then the libraries under their
// default prefixes. Names a library shares with other programs (Celery's queue lists named after
// the queue) are left to the shapes: alone they prove nothing. g.mu is held.
func (g *Groups) library(name string) (*Library, bool) {
	if l, registry := g.routed(name); l != nil {
		return l, registry
	}
	for i := range g.opt.Sources {
		l := &g.opt.Sources[i]
		if l.Job != "" {
			if registry, ok := l.source.Recognize(name); ok {
				return l, registry
			}
			continue
		}
		if len(name) > len(l.prefix) && strings.HasPrefix(name, l.prefix) {
			return l, false
		}
	}
	return nil, false
}

// claims reports whether the library would claim name, ambiguous names included.
func (l *Library) claims(name string) bool {
	if l.Job != "" {
		_, ok := l.source.Classify(name)
		return ok
	}
	return strings.HasPrefix(name, l.prefix)
}

// register notes that the library's registry key name was seen, and the queue it names when the
// library names its queue lists after it: kombu's "_kombu.binding.<exchange>" set binds, by
// Celery's default, a queue named as the exchange, whose list is named as the queue.
func (sh *shape) register(name string) {
	sh.registry = true
	if q, ok := sh.lib.source.NamedQueue(name); ok {
		sh.addQueue(q)
	}
}

// addQueue keeps a queue name a registry gave, up to maxDistinct of them.
func (sh *shape) addQueue(q string) {
	for _, have := range sh.queues {
		if have == q {
			return
		}
	}
	if len(sh.queues) < maxDistinct {
		sh.queues = append(sh.queues, strings.Clone(q))
	}
}

// knows reports whether name is the list of a queue the library's registry named (or, under a
// prefix found by its marks, the registries met before it was trusted).
func (sh *shape) knows(name string) bool {
	q, ok := strings.CutPrefix(name, sh.lib.source.Prefix)
	if !ok {
		return false
	}
	if c := sh.lib.cand; c != nil && slices.Contains(c.proof.Queues(), q) {
		return true
	}
	return slices.Contains(sh.queues, q)
}

// The companion keys hourglass keeps beside its own queues, in the queue's hash slot.
const (
	compInFlight   uint8 = 1 << iota // a delay queue's claimed tasks
	compProcessing                   // a list queue's popped tasks
	compTest                         // the test queue test traffic drives beside a real one
)

// companionSuffixes are the companions' suffixes as store names them.
var companionSuffixes = []struct {
	suffix string
	bit    uint8
}{
	{strings.TrimPrefix(store.InFlightKey("q"), "{q}"), compInFlight},
	{strings.TrimPrefix(store.ProcessingKey("q"), "{q}"), compProcessing},
	{strings.TrimPrefix(store.TestQueueKey("q"), "{q}"), compTest},
}

// companion is a companion key's queue and which companion it is (bit 0 when the name is none).
type companion struct {
	queue string
	bit   uint8
}

// companionOf reads name as the companion of one of hourglass's queues.
func companionOf(name string) companion {
	for _, c := range companionSuffixes {
		if strings.HasSuffix(name, c.suffix) {
			if q, ok := store.CompanionQueue(name); ok {
				return companion{queue: q, bit: c.bit}
			}
			return companion{}
		}
	}
	return companion{}
}

// maxExpected bounds the names Expect keeps.
const maxExpected = 4096

// Expect notes names that an entry in force claims once it reads its registries, which a sweep
// cannot tell by their names: the list Celery names after an exchange whose bindings the entry's
// sweep met (jobs.Source.NamedQueueKeys). A group of such keys alone proposes no entry: it
// would count the library's queue a second time.
func (g *Groups) Expect(names ...string) {
	if len(names) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.expected == nil {
		g.expected = map[string]bool{}
	}
	for _, n := range names {
		if len(g.expected) < maxExpected {
			g.expected[strings.Clone(n)] = true
		}
	}
}

// allExpected reports whether every key of sh is one Expect named. g.mu is held.
func (g *Groups) allExpected(sh *shape) bool {
	if len(g.expected) == 0 || sh.keys == 0 || sh.keys > int64(len(sh.examples)) {
		return false
	}
	for _, ex := range sh.examples {
		if !g.expected[ex] {
			return false
		}
	}
	return true
}

// expectedGroup is a group of keys an entry in force claims once it reads its registries: no
// entry of its own.
func expectedGroup(gr Group) Group {
	gr.Entry = nil
	gr.Evidence = append(gr.Evidence, "named after an exchange whose bindings a [[job_queue]] entry in force claims: the list of that Celery queue, which the entry reads (no entry of its own)")
	return gr
}
