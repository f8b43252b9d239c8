package discover

import (
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// Options bound what Groups keep. The zero value is usable.
type Options struct {
	// MaxShapes caps the distinct shapes kept (2000 when zero); keys of further shapes are
	// counted in their skeleton's catch-all shape.
	MaxShapes int
	// Location is the zone date windows are read in until their own data shows theirs
	// (time.Local when nil).
	Location *time.Location
	// Host is this machine's zone under its IANA name, proposed by name for windows cut at its
	// offset; nil when unknown (the zone proposed is then UTC or an offset such as "+08:00").
	Host *time.Location
	// Sources are the job libraries and limiter libraries whose keys are recognised by name
	// (Libraries() when nil).
	Sources []Library
}

// Groups counts key names into shapes as a sweep meets them and keeps, per shape, a few example
// names, what each segment held, and the evidence of the keys sampled. It is safe for concurrent
// use: a cluster's masters are swept at once.
type Groups struct {
	mu      sync.Mutex
	opt     Options
	seed    maphash.Seed
	skels   map[string]*skeleton
	libs    map[string]*shape // by library name
	shapes  int
	keys    int64
	tokBuf  []token
	keyBuf  []byte
	wordBuf []string
	// shapeBuf spells a shape's key, its words joined by NUL, looked up without an allocation.
	shapeBuf []byte
	// strata are each master's rows of pages, for the estimates of a sweep stopped before its
	// end; page counts the shapes of the page AddPage is adding.
	strata map[string]*sampleStratum
	page   map[*shape]float64
	// learnt are the prefixes found by libraries' marks (prefixes.go).
	learnt learning
	// markReads counts the marks sampled past their shapes' sampling (markWanted).
	markReads int
	// expected are names an entry claims once it reads its registries (Expect), up to
	// maxExpected.
	expected map[string]bool
}

// Per-shape bounds.
const (
	maxExamples   = 3
	maxDistinct   = 32 // distinct values kept per segment; past it the segment varies
	firstSamples  = 8  // a shape's first keys are all sampled
	maxSamples    = 32 // then one in sampleEvery, up to this many
	sampleEvery   = 64
	defaultShapes = 2000
)

// skeleton is a run of segment classes and separators; its shapes differ only in the literal
// words they hold.
type skeleton struct {
	seps     []byte
	classes  []class
	words    []map[string]struct{} // distinct words per word segment past the first
	wordOver []bool                // the segment held more than maxDistinct words: it varies
	shapes   map[string]*shape
	keys     int64
}

// shape is the keys of one skeleton that hold the same literal words.
type shape struct {
	skel     *skeleton
	words    []string // per segment: the literal word, or "" where the segment varies
	keys     int64
	examples []string
	slots    []slotStat
	sampled  int
	ev       evidence
	lib      *Library // set for a library's keys, which are grouped by library, not by shape
	registry bool     // a library's: the key where it registers its queues was seen
	// queues are, for a library that names its queue lists after its registry keys (Celery's
	// exchanges), the names those keys gave, up to maxDistinct.
	queues []string
	// companions says which of hourglass's companion keys of the shape's queues were seen.
	companions uint8
	// derived marks a copy made for a Result (projected, cloned); members are then the live
	// shapes merged into it, whose keys the rows of pages count.
	derived bool
	members []*shape
	// exclude and splitNote are set on a part of a group split by score unit (splitUnits): the
	// globs of the keys its pattern leaves to the other parts, and what the evidence says of it.
	exclude   []string
	splitNote string
}

// slotStat is what one segment held over a shape's keys.
type slotStat struct {
	distinct map[string]struct{}
	over     bool
	min, max string // time tokens: the earliest and latest seen (they sort as text)
	sample   string // the first value seen, kept when distinct is dropped
	// align is, for Unix times, the longest of a day, an hour, a minute and a second that every
	// value seen is a multiple of (in seconds); 0 before any.
	align int64
}

// New returns empty Groups.
func New(opt Options) *Groups {
	if opt.MaxShapes <= 0 {
		opt.MaxShapes = defaultShapes
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
	if opt.Sources == nil {
		opt.Sources = Libraries()
	}
	return &Groups{opt: opt, seed: maphash.MakeSeed(), skels: map[string]*skeleton{}, libs: map[string]*shape{}}
}

// Add counts names, keys no configured entry claims, and returns those among them whose type,
// TTL and value the sweep should read and hand to AddSample: every shape's first keys, then a
// thin sample.
func (g *Groups) Add(names []string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.add(names, nil)
}

// add is Add with g.mu held; page, when not nil, counts each shape's names.
func (g *Groups) add(names []string, page map[*shape]float64) []string {
	var sample []string
	for _, name := range names {
		g.keys++
		sh := g.shapeOf(name)
		sh.keys++
		if page != nil {
			page[sh]++
		}
		if len(sh.examples) < maxExamples {
			sh.examples = append(sh.examples, name)
		}
		if (sh.sampled < firstSamples || sh.sampled < maxSamples && maphash.String(g.seed, name)%sampleEvery == 0 || g.markWanted(name)) &&
			companionOf(name).bit == 0 { // a queue's companion is not the queue: its samples would blur the queue's
			sh.sampled++
			sample = append(sample, name)
		}
	}
	return sample
}

// shapeOf finds or makes the shape of name, counting its segments. g.mu is held.
func (g *Groups) shapeOf(name string) *shape {
	if lib, registry := g.library(name); lib != nil {
		if lib.cand != nil {
			g.learn(name) // the marks seen once trusted, for the evidence
		}
		sh := g.libs[lib.key()]
		if sh == nil {
			sh = &shape{lib: lib}
			g.libs[lib.key()] = sh
		}
		if registry {
			sh.register(name)
		}
		return sh
	}
	if c := companionOf(name); c.bit != 0 {
		sh := g.shapeOf(c.queue) // counted with its queue, whose entry then reads it
		sh.companions |= c.bit
		return sh
	}
	g.learn(name)
	toks := tokenize(name, g.tokBuf)
	g.tokBuf = toks
	sk := g.skeletonOf(toks)
	sk.keys++
	words := g.wordBuf[:0]
	for i, t := range toks {
		w := ""
		if t.cls == clWord {
			w = name[t.start:t.end]
			if i > 0 {
				w = sk.noteWord(i, w, g)
			}
		}
		words = append(words, w)
	}
	g.wordBuf = words
	b := g.shapeBuf[:0]
	for i, w := range words {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, w...)
	}
	g.shapeBuf = b
	sh := sk.shapes[string(b)]
	if sh == nil {
		if g.shapes >= g.opt.MaxShapes {
			sh = sk.catchAll()
		} else {
			sh = &shape{skel: sk, words: append([]string(nil), words...), slots: make([]slotStat, len(toks))}
			sk.shapes[string(b)] = sh
			g.shapes++
		}
	}
	for i, t := range toks {
		sh.slots[i].note(name[t.start:t.end], t.cls)
	}
	return sh
}

// skeletonOf finds or makes the skeleton of toks. g.mu is held.
func (g *Groups) skeletonOf(toks []token) *skeleton {
	b := g.keyBuf[:0]
	for _, t := range toks {
		b = append(b, t.sep, classCode[t.cls])
	}
	g.keyBuf = b
	if sk := g.skels[string(b)]; sk != nil {
		return sk
	}
	sk := &skeleton{shapes: map[string]*shape{}, words: make([]map[string]struct{}, len(toks)),
		wordOver: make([]bool, len(toks))}
	for _, t := range toks {
		sk.seps = append(sk.seps, t.sep)
		sk.classes = append(sk.classes, t.cls)
	}
	g.skels[string(b)] = sk
	return sk
}

// noteWord records word at segment i and returns the word the shape keeps there: "" once the
// segment has held too many words to be a literal, after merging the shapes that differed there.
func (sk *skeleton) noteWord(i int, word string, g *Groups) string {
	if sk.wordOver[i] {
		return ""
	}
	if sk.words[i] == nil {
		sk.words[i] = map[string]struct{}{}
	}
	sk.words[i][word] = struct{}{}
	if len(sk.words[i]) <= maxDistinct {
		return word
	}
	sk.wordOver[i] = true
	sk.words[i] = nil
	old := sk.shapes
	sk.shapes = map[string]*shape{}
	for _, sh := range old {
		sh.words[i] = ""
		key := strings.Join(sh.words, "\x00")
		if into := sk.shapes[key]; into != nil {
			into.merge(sh)
			g.redirect(sh, into)
			g.shapes--
		} else {
			sk.shapes[key] = sh
		}
	}
	return ""
}

// catchAll is the shape that takes a skeleton's keys once no more shapes may be kept: every word
// past the first varies.
func (sk *skeleton) catchAll() *shape {
	key := "\x01catch-all"
	if sh := sk.shapes[key]; sh != nil {
		return sh
	}
	sh := &shape{skel: sk, words: make([]string, len(sk.classes)), slots: make([]slotStat, len(sk.classes))}
	sk.shapes[key] = sh
	return sh
}

// note records one segment's text.
func (s *slotStat) note(text string, cls class) {
	if s.sample == "" {
		s.sample = strings.Clone(text)
	}
	if cls.timeClass() {
		if s.min == "" || text < s.min {
			s.min = text
		}
		if text > s.max {
			s.max = text
		}
		if cls == clUnixS || cls == clUnixMS {
			s.align = alignOf(text, cls, s.align)
		}
	}
	if s.over {
		return
	}
	if s.distinct == nil {
		s.distinct = map[string]struct{}{}
	}
	if _, ok := s.distinct[text]; ok {
		return
	}
	if len(s.distinct) >= maxDistinct {
		s.over, s.distinct = true, nil
		return
	}
	s.distinct[strings.Clone(text)] = struct{}{}
}

// merge folds o's keys into sh.
func (sh *shape) merge(o *shape) {
	if sh.derived {
		sh.members = append(sh.members, own(o)...)
	}
	sh.keys += o.keys
	for _, ex := range o.examples {
		if len(sh.examples) < maxExamples {
			sh.examples = append(sh.examples, ex)
		}
	}
	for i := range sh.slots {
		sh.slots[i].merge(o.slots[i])
	}
	sh.sampled += o.sampled
	sh.ev.merge(&o.ev)
	sh.companions |= o.companions
	sh.registry = sh.registry || o.registry
	for _, q := range o.queues {
		sh.addQueue(q)
	}
}

func (s *slotStat) merge(o slotStat) {
	if s.sample == "" {
		s.sample = o.sample
	}
	if o.align != 0 && (s.align == 0 || o.align < s.align) {
		s.align = o.align
	}
	if o.min != "" && (s.min == "" || o.min < s.min) {
		s.min = o.min
	}
	if o.max > s.max {
		s.max = o.max
	}
	if s.over || o.over {
		s.over, s.distinct = true, nil
		return
	}
	for v := range o.distinct {
		s.note(v, clWord)
	}
}

// Keys returns how many names Add has counted.
func (g *Groups) Keys() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.keys
}

// AddSample folds in what the sweep read of one sampled key.
func (g *Groups) AddSample(s Sample) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var sh *shape
	g.learnSample(s)
	if lib, _ := g.library(s.Name); lib != nil {
		sh = g.libs[lib.key()] // nil when the name was added before its prefix was trusted
	}
	if sh == nil {
		toks := tokenize(s.Name, g.tokBuf)
		g.tokBuf = toks
		sk := g.skels[string(g.skeletonKey(toks))]
		if sk == nil {
			return
		}
		words := make([]string, len(toks))
		for i, t := range toks {
			if t.cls == clWord && (i == 0 || !sk.wordOver[i]) {
				words[i] = s.Name[t.start:t.end]
			}
		}
		if sh = sk.shapes[strings.Join(words, "\x00")]; sh == nil {
			sh = sk.shapes["\x01catch-all"]
		}
		if sh != nil {
			s.window = g.windowIn(s.Name, toks)
		}
	}
	if sh != nil {
		sh.ev.add(s)
	}
}

// skeletonKey spells toks' skeleton in g.keyBuf. g.mu is held.
func (g *Groups) skeletonKey(toks []token) []byte {
	b := g.keyBuf[:0]
	for _, t := range toks {
		b = append(b, t.sep, classCode[t.cls])
	}
	g.keyBuf = b
	return b
}

// windowIn returns the end of the date window name's last date token names, or zero.
func (g *Groups) windowIn(name string, toks []token) time.Time {
	for i := len(toks) - 1; i >= 0; i-- {
		if t := toks[i]; t.cls.dateWindow() {
			start, length, ok := windowOf(t.cls, name[t.start:t.end], g.opt.Location)
			if ok {
				return start.Add(length)
			}
		}
	}
	return time.Time{}
}
