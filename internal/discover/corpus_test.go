package discover_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// The corpus is one redis-server filled the ways real keyspaces are: hourglass's own structures
// written through the store's writers, the naming styles of the blog posts hourglass comes from,
// the job libraries and limiter libraries written by the libraries themselves, and noise (caches,
// sessions, records, sets, leaderboards). Each family knows its keys (the keys that appeared
// while it was written) and what discover should say of them; the test sweeps the server once,
// finds the group each key fell into, and scores the families.

// family is one kind of keys in the corpus and what discover should make of it.
type family struct {
	name string
	kind discover.Kind
	// patterns are the patterns accepted for the groups its keys fall into, placeholders' names
	// aside ("cache:user:<>"; a final "*" accepts any pattern it starts). For a library, the
	// entry's layout instead.
	patterns []string
	layout   string
	// hour and day are the window formats the entry must have ("" for none).
	hour, day string
	// evidence, when set, must appear in a group's evidence (a finding, not a guess).
	evidence string
	// noEntry is set for a kind read right but whose windows no entry can read.
	noEntry bool
	noise   bool
	keys    []string
}

// corpus builds the keyspace family by family.
type corpus struct {
	t    *testing.T
	srv  *redistest.Server
	rdb  *redis.Client
	st   *store.Store
	now  time.Time
	rnd  *rand.Rand
	fams []*family
	seen map[string]bool
}

func newCorpus(t *testing.T) *corpus {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	st := store.New(rdb, store.Options{})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &corpus{t: t, srv: srv, rdb: rdb, st: st, now: st.Now(), rnd: rand.New(rand.NewPCG(1, 2)), seen: map[string]bool{}}
}

// add writes a family with build and gives it the keys that appeared meanwhile.
func (c *corpus) add(f *family, build func()) {
	c.t.Helper()
	build()
	for _, k := range scanAll(c.t, c.rdb) {
		if !c.seen[k] && !store.IsOwnKey(k) { // the sweep skips hourglass's bookkeeping
			c.seen[k] = true
			f.keys = append(f.keys, k)
		}
	}
	if len(f.keys) == 0 {
		c.t.Fatalf("family %s wrote no key", f.name)
	}
	c.fams = append(c.fams, f)
}

// must fails the test on err.
func (c *corpus) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// exec runs a pipeline built by fill.
func (c *corpus) exec(fill func(p redis.Pipeliner)) {
	c.t.Helper()
	p := c.rdb.Pipeline()
	fill(p)
	_, err := p.Exec(c.t.Context())
	c.must(err)
}

func scanAll(t testing.TB, rdb *redis.Client) []string {
	t.Helper()
	var keys []string
	it := rdb.Scan(t.Context(), 0, "*", 1000).Iterator()
	for it.Next(t.Context()) {
		keys = append(keys, it.Val())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// build fills the corpus: the libraries first (their fixtures take seconds), then the keys with
// short TTLs, so nothing expires before the sweep.
func buildCorpus(t *testing.T) *corpus {
	c := newCorpus(t)
	libraryFamilies(c)
	noiseFamilies(c)
	blogFamilies(c)
	ownFamilies(c)
	return c
}

// TestCorpus sweeps the corpus once and holds discover to it: at least 95% of families come
// back with the right kind, pattern and window formats, and no noise is proposed as a counter.
// Then the entries it proposes, loaded as a config, claim every key but the noise.
func TestCorpus(t *testing.T) {
	c := buildCorpus(t)
	snap, err := scanner.Take(t.Context(), c.rdb, nil, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := snap.Unclaimed
	for _, g := range res.Groups {
		t.Logf("group %-55q %-16s %5d keys %-6s %v", g.Pattern, g.Kind, g.Keys, g.Confidence, g.Evidence)
	}
	m := newGroupMatcher(res.Groups, c.seen)
	right, byKind := 0, map[discover.Kind][2]int{}
	var rows []string
	for _, f := range c.fams {
		ok, got := judge(f, m)
		if ok {
			right++
		}
		k := byKind[f.kind]
		k[1]++
		if ok {
			k[0]++
		}
		byKind[f.kind] = k
		mark := "ok"
		if !ok {
			mark = "WRONG"
		}
		rows = append(rows, fmt.Sprintf("%-5s %-26s %-16s %4d keys  %s", mark, f.name, f.kind, len(f.keys), got))
	}
	t.Logf("families:\n%s", strings.Join(rows, "\n"))
	var kinds []string
	for k, n := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d/%d", k, n[0], n[1]))
	}
	sort.Strings(kinds)
	ratio := float64(right) / float64(len(c.fams))
	t.Logf("right: %d of %d families (%.1f%%); by kind: %s", right, len(c.fams), 100*ratio, strings.Join(kinds, ", "))
	if ratio < 0.95 {
		t.Errorf("%d of %d families right (%.1f%%), want at least 95%%", right, len(c.fams), 100*ratio)
	}
	for _, f := range c.fams {
		for _, g := range m.groupsOf(f.keys) {
			if f.noise && g.Kind == discover.KindCounter {
				t.Errorf("noise family %s proposed as a counter: %s", f.name, g.Pattern)
			}
		}
	}
	t.Run("entries load", func(t *testing.T) { checkEntriesLoad(t, c, res) })
}

// judge says whether f's keys came back as f expects, and what they came back as.
func judge(f *family, m *groupMatcher) (bool, string) {
	groups := m.groupsOf(f.keys)
	if len(groups) == 0 {
		return false, "in no group"
	}
	ok := !slices.Contains(groups, nil)
	var got []string
	for _, g := range groups {
		if g == nil {
			got = append(got, "(some keys in no group)")
			continue
		}
		desc := fmt.Sprintf("%s %s", g.Kind, g.Pattern)
		if en := g.Entry; en != nil && (en.HourFormat != "" || en.DayFormat != "") {
			desc += fmt.Sprintf(" [hour %q day %q]", en.HourFormat, en.DayFormat)
		}
		got = append(got, desc)
		ok = ok && groupFits(f, g)
	}
	return ok, strings.Join(got, "; ")
}

// groupFits reports whether g is what f expects.
func groupFits(f *family, g *discover.Group) bool {
	if g.Kind != f.kind {
		return false
	}
	if f.evidence != "" && !slices.ContainsFunc(g.Evidence, func(l string) bool { return strings.Contains(l, f.evidence) }) {
		return false
	}
	if e := g.Entry; e != nil && e.Table == "limiter" && slices.Contains(e.Guessed, "limit") != (e.Layout != "limits") {
		return false // only python limits' keys spell their limit: every other limiter's is a guess
	}
	if f.layout != "" {
		return g.Entry != nil && g.Entry.Layout == f.layout
	}
	anon := anonymous(g.Pattern)
	if !slices.ContainsFunc(f.patterns, func(p string) bool {
		prefix, wild := strings.CutSuffix(p, "*")
		return p == anon || wild && strings.HasPrefix(anon, prefix)
	}) {
		return false
	}
	if f.hour != "" || f.day != "" {
		return g.Entry != nil && g.Entry.HourFormat == f.hour && g.Entry.DayFormat == f.day
	}
	switch f.kind {
	case discover.KindOther, discover.KindUndecided:
		return g.Entry == nil
	}
	return (g.Entry != nil) != f.noEntry
}

var placeholder = regexp.MustCompile(`<[^<>]*>`)

// anonymous drops the names of a pattern's placeholders: "flow:<app>:<window>" -> "flow:<>:<>".
func anonymous(p string) string { return placeholder.ReplaceAllString(p, "<>") }

// groupMatcher finds the group a key name fell into: the group whose pattern it fits with the
// most literal text, or the library whose names it has (Celery's queue lists by the exchange
// bindings of the same name, as Celery declares a queue).
type groupMatcher struct {
	groups []discover.Group
	keys   map[string]bool  // every key of the corpus
	res    []*regexp.Regexp // per group; nil for a library's
	lits   []int
}

func newGroupMatcher(groups []discover.Group, keys map[string]bool) *groupMatcher {
	m := &groupMatcher{groups: groups, keys: keys}
	for _, g := range groups {
		if g.Entry != nil && g.Entry.Layout != "" {
			m.res, m.lits = append(m.res, nil), append(m.lits, 0)
			continue
		}
		var b strings.Builder
		lit := 0
		b.WriteString("^")
		for i, part := range placeholder.Split(g.Pattern, -1) {
			if i > 0 {
				b.WriteString("(.+?)")
			}
			b.WriteString(regexp.QuoteMeta(part))
			lit += len(part)
		}
		b.WriteString("$")
		m.res, m.lits = append(m.res, regexp.MustCompile(b.String())), append(m.lits, lit)
	}
	return m
}

// groupOf returns the group name fell into, or nil: the group it is an example of, or the one
// whose pattern fits it best. A companion of one of hourglass's queues falls into its queue's.
func (m *groupMatcher) groupOf(name string) *discover.Group {
	if q, ok := store.CompanionQueue(name); ok {
		name = q
	}
	for i, g := range m.groups { // a group's own example is its, whatever other patterns fit it
		if slices.Contains(g.Examples, format.Escape(name)) {
			return &m.groups[i]
		}
	}
	best := -1
	for i, re := range m.res {
		if re != nil && re.MatchString(name) && (best < 0 || m.lits[i] > m.lits[best]) {
			best = i
		}
	}
	if best >= 0 {
		return &m.groups[best]
	}
	for i, g := range m.groups {
		if m.res[i] == nil && (libraryClaims(g.Entry.Layout, name) || g.Entry.Layout == "celery" && m.keys["_kombu.binding."+name]) {
			return &m.groups[i]
		}
	}
	return nil
}

// groupsOf returns the distinct groups names fell into, nil among them when some fell in none.
func (m *groupMatcher) groupsOf(names []string) []*discover.Group {
	var out []*discover.Group
	for _, n := range names {
		if g := m.groupOf(n); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// libraryClaims reports whether the library named layout writes keys named name under its
// default prefix.
func libraryClaims(layout, name string) bool {
	if l, err := jobs.ParseLayout(layout); err == nil {
		_, ok := jobs.Source{Layout: l, Prefix: l.DefaultPrefix()}.Classify(name)
		return ok
	}
	l, err := limits.ParseLayout(layout)
	if err != nil {
		return false
	}
	p := l.DefaultPattern()
	return strings.HasPrefix(name, p[:strings.IndexByte(p, '<')])
}
