package jobs

// Searching a queue's tasks: every task of the sections asked for, page by page through
// Queue.Tasks (the same windows the console lists, never a whole set at once), each payload tested
// against a Match, the matches handed back as each page finds them. Nothing is kept of a task
// that does not match, and the search keeps no match itself: the caller keeps what it shows. The
// reads keep to a keys-per-second budget (a page's entries, its section's size, and each job
// hash a page reads) and stop when the context ends, within one page.
//
// Where it reaches: to the end of each section, however long, as the section is when the search
// gets there. A live queue moves under the search (workers take from the head, producers add at
// the tail, tasks are run, retried and deleted), so a page is never read at a bare offset: each
// page starts one task before where the last ended, and the search finds its place again by the
// last tasks it read (their entries), walking back a page at a time when tasks before its place
// have left meanwhile. So every task that is in its section, unchanged, from the search's start
// to its end is tested at least once. A task may be tested twice, and is then reported twice:
// when none of the last page's tasks is left anywhere before the search's place (they were all
// taken, or more tasks than a page were added before them), the search goes on from the
// section's head, and counts it (SearchProgress.Restarts).
//
// What it tests is the payload a page holds: its first PayloadCap bytes. A larger payload is
// tested on that part only, and counted (Cut); a task whose payload could not be read (its job
// hash gone) is counted (Unreadable), and so is a payload with no JSON for a field match
// (NotJSON).

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// SearchOptions tune a Search.
type SearchOptions struct {
	// KeysPerSecond is the budget the reads keep to; 0 is none.
	KeysPerSecond int
	// Charge is told the keys each page read (nil: nobody), so a sweep that shares the budget
	// waits for them.
	Charge func(keys int)
	// Now is the server's clock the pages are read against (time.Now when nil).
	Now func() time.Time
	// PageSize is the tasks a page asks for (MaxTaskPage when 0), held to the budget of a second.
	PageSize int
}

// Found is one task that matched, with the section and place it was read at.
type Found struct {
	Section TaskSection
	At      int64 // its place in the section when read (0 the first)
	Task    Task
}

// SearchProgress is where a search is: counts over every section searched so far.
type SearchProgress struct {
	Section TaskSection // the section being searched ("" once done)
	// Scanned is how many tasks were tested in all, SectionScanned of them in Section, which
	// held SectionTotal tasks when last read (-1 when unknown).
	Scanned, SectionScanned, SectionTotal int64
	Matched                               int64
	// Cut payloads were tested on their first PayloadCap bytes only; Unreadable ones not at
	// all; NotJSON had no JSON document for a field match.
	Cut, Unreadable, NotJSON int64
	// Restarts is how often the search lost its place in a section that moved under it and went
	// on from the section's head (tasks were tested again).
	Restarts int64
	Keys     int64 // keys read, charged to the budget
	Done     bool
}

// Searcher searches a queue's sections one page step at a time (Step), so a caller drives it
// from where it runs (the console from its commands) and stops it by calling no more.
type Searcher struct {
	q     Queue
	secs  []TaskSection
	m     Match
	opt   SearchOptions
	sec   int // the section under way
	walk  sectionWalk
	prog  SearchProgress
	start time.Time // when the budget began
}

// sectionWalk is the place in one section: where the next page starts, and the entries of the
// last tasks read, to find that place again.
type sectionWalk struct {
	off     int64
	anchors []string
}

// NewSearcher searches sections secs of q for m. It reads nothing.
func NewSearcher(q Queue, secs []TaskSection, m Match, opt SearchOptions) *Searcher {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	size := opt.PageSize
	if size <= 0 {
		size = MaxTaskPage
	}
	if opt.KeysPerSecond > 0 {
		size = min(size, max(opt.KeysPerSecond/2, 1)) // a page and its job hashes fit a second
	}
	opt.PageSize = max(min(size, MaxTaskPage), 2) // a page starts one task back: two reach a new one
	s := &Searcher{q: q, secs: secs, m: m, opt: opt}
	s.prog.SectionTotal = -1
	if len(secs) == 0 {
		s.prog.Done = true
	} else {
		s.prog.Section = secs[0]
	}
	return s
}

// Progress is where the search is.
func (s *Searcher) Progress() SearchProgress { return s.prog }

// Step reads the section under way on from the search's place, for at most about budget of
// time (at least one page), and returns the matches it found and where the search is. Once
// Progress().Done, it reads nothing. An error leaves the search where it was: Step may be called
// again.
func (s *Searcher) Step(ctx context.Context, rdb redis.Cmdable, budget time.Duration) ([]Found, SearchProgress, error) {
	var found []Found
	until := time.Now().Add(budget)
	for first := true; !s.prog.Done && (first || time.Now().Before(until)); first = false {
		f, err := s.page(ctx, rdb)
		found = append(found, f...)
		if err != nil {
			return found, s.prog, err
		}
	}
	return found, s.prog, nil
}

// Search runs a whole search, handing each step's matches and progress to each (on the calling
// goroutine), until it is done or ctx ends.
func Search(ctx context.Context, rdb redis.Cmdable, q Queue, secs []TaskSection, m Match, opt SearchOptions,
	each func([]Found, SearchProgress)) (SearchProgress, error) {
	s := NewSearcher(q, secs, m, opt)
	for !s.prog.Done {
		found, prog, err := s.Step(ctx, rdb, 200*time.Millisecond)
		if len(found) > 0 || err == nil {
			each(found, prog)
		}
		if err != nil {
			return prog, err
		}
	}
	return s.prog, nil
}

// page reads the section under way on from the search's place (walking back to find it, when
// the section moved), tests the tasks not read before, and moves to the next section at the end.
func (s *Searcher) page(ctx context.Context, rdb redis.Cmdable) ([]Found, error) {
	sec, w := s.secs[s.sec], &s.walk
	start := max(w.off-1, 0)
	if len(w.anchors) == 0 {
		start = w.off
	}
	for {
		p, err := s.read(ctx, rdb, sec, start)
		if err != nil {
			return nil, err
		}
		i := -1 // the tasks of p not read before are p.Tasks[i+1:]
		if len(w.anchors) > 0 {
			i = anchorIn(p.Tasks, w.anchors)
		}
		switch {
		case len(w.anchors) == 0 || i >= 0:
		case start > 0: // tasks before the place left: it is further back
			start = max(start-int64(s.opt.PageSize)+1, 0)
			continue
		default: // none of the last tasks read is left before or in the head's page
			s.prog.Restarts++
		}
		fresh := p.Tasks[i+1:]
		if len(fresh) > 0 {
			w.anchors = w.anchors[:0]
			for _, t := range fresh[max(len(fresh)-8, 0):] {
				w.anchors = append(w.anchors, t.Member)
			}
		}
		w.off = start + int64(len(p.Tasks))
		s.prog.SectionTotal = p.Total
		found := s.test(sec, fresh, w.off-int64(len(fresh)))
		if len(p.Tasks) < s.opt.PageSize || (p.Total >= 0 && w.off >= p.Total) {
			s.nextSection()
		}
		return found, nil
	}
}

// anchorIn is the place in tasks of the last of anchors found there (each its first
// occurrence), or -1.
func anchorIn(tasks []Task, anchors []string) int {
	for a := len(anchors) - 1; a >= 0; a-- {
		for i, t := range tasks {
			if t.Member == anchors[a] {
				return i
			}
		}
	}
	return -1
}

// test tests tasks, read from place at on, and counts them.
func (s *Searcher) test(sec TaskSection, tasks []Task, at int64) []Found {
	var found []Found
	for i, t := range tasks {
		s.prog.Scanned++
		s.prog.SectionScanned++
		if t.PayloadBytes > int64(len(t.Payload)) {
			s.prog.Cut++
		}
		switch s.m.test(t) {
		case matchYes:
			s.prog.Matched++
			found = append(found, Found{Section: sec, At: at + int64(i), Task: t})
		case matchUnreadable:
			s.prog.Unreadable++
		case matchNotJSON:
			s.prog.NotJSON++
		}
	}
	return found
}

func (s *Searcher) nextSection() {
	s.sec++
	s.walk = sectionWalk{}
	s.prog.SectionScanned, s.prog.SectionTotal = 0, -1
	if s.sec >= len(s.secs) {
		s.prog.Done, s.prog.Section = true, ""
		return
	}
	s.prog.Section = s.secs[s.sec]
}

// read reads one page at start, once the budget allows, and charges it.
func (s *Searcher) read(ctx context.Context, rdb redis.Cmdable, sec TaskSection, start int64) (TaskPage, error) {
	if err := s.wait(ctx); err != nil {
		return TaskPage{}, err
	}
	p, err := s.q.Tasks(ctx, rdb, sec, start, s.opt.PageSize, s.opt.Now())
	cost := PageKeys(p)
	s.prog.Keys += int64(cost)
	if s.opt.Charge != nil {
		s.opt.Charge(cost)
	}
	return p, err
}

// searchSlack is the most of the budget a search left idle (stopped, or its steps not asked
// for) may spend at once when it goes on, as a sweep's pacer allows.
const searchSlack = 250 * time.Millisecond

// wait holds the next read until the keys read so far fit the budget since the first read.
func (s *Searcher) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.opt.KeysPerSecond <= 0 {
		return nil
	}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	due := s.start.Add(time.Duration(float64(s.prog.Keys) / float64(s.opt.KeysPerSecond) * float64(time.Second)))
	if behind := time.Since(due); behind > searchSlack { // a search stopped or waited on saves no more than the slack
		s.start = s.start.Add(behind - searchSlack)
		due = due.Add(behind - searchSlack)
	}
	if d := time.Until(due); d > 0 {
		return store.Sleep(ctx, d)
	}
	return nil
}

// PageKeys is what reading page p cost against a keys-per-second budget: its entries and its
// section's size, and the job hash of each entry that names a job kept elsewhere.
func PageKeys(p TaskPage) int {
	n := len(p.Tasks) + 1
	for _, t := range p.Tasks {
		if t.ID != "" {
			n++
		}
	}
	return n
}
