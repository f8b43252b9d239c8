package discover

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hourglass-dev/hourglass/store"
)

// Sample is what the sweep read of one sampled key, at the server's clock Now.
type Sample struct {
	Name string
	// Type is Redis's TYPE ("string", "zset", ...); "none" when the key went before it was read.
	Type string
	TTL  time.Duration // negative when the key has no expiry
	// Bytes is MEMORY USAGE; negative when it was not read, with BytesErr saying why when the
	// server refused it.
	Bytes    int64
	BytesErr string
	// Value is a string's first bytes (up to ValuePrefix).
	Value string
	// Len is a string's STRLEN, or the element count of a list, set, hash, sorted set or stream.
	Len int64
	// MinScore and MaxScore are a sorted set's lowest and highest scores (when Len > 0).
	MinScore, MaxScore float64
	// Field is, for a hash HashField names a field of, that field's value ("" when absent).
	Field string
	// Member is, for a set MemberRead names, one of its members ("" when not read).
	Member string
	Now    time.Time

	window time.Time // the end of the date window the name holds, if any
}

// ValuePrefix is how much of a string value the sweep reads for a sample.
const ValuePrefix = 64

// evidence is what a shape's samples showed. It merges, so shapes can be folded together.
type evidence struct {
	sampled, gone int
	types         map[string]int

	noTTL, withTTL int
	ttlMax         time.Duration
	ttlMin         time.Duration
	retN           int           // windowed keys with a TTL
	retMax         time.Duration // their expiry past their window's end
	retMin         time.Duration

	ints, nonInts, hll, binary, tokens int
	intMax, intMin                     int64

	ahead, recent, past, notTime int // sorted sets, by where their newest score lies
	units                        map[store.ScoreUnit]int
	unitKeys                     map[store.ScoreUnit][]string // the first few names (in order) per unit
	spanMax                      time.Duration                // newest minus oldest score, as times
	lenMax                       int64

	bytes, bytesN int64
	bytesErr      string

	bloomMeta, bloomParts int       // our Bloom filters' metadata hashes, and strings named as their sub-filters
	lastNow               time.Time // the server clock at the latest sample
}

// recentSpan is how far in the past a sorted set's newest score may be for it to read as a
// sliding limiter's recent hits.
const recentSpan = 24 * time.Hour

func (e *evidence) add(s Sample) {
	e.sampled++
	if s.Now.After(e.lastNow) {
		e.lastNow = s.Now
	}
	if s.Type == "none" || s.Type == "" {
		e.gone++
		return
	}
	if e.types == nil {
		e.types = map[string]int{}
	}
	e.types[s.Type]++
	e.addTTL(s)
	if s.Bytes >= 0 {
		e.bytes += s.Bytes
		e.bytesN++
	} else if s.BytesErr != "" {
		e.bytesErr = s.BytesErr
	}
	e.lenMax = max(e.lenMax, s.Len)
	switch s.Type {
	case "string":
		e.addString(s)
		if _, _, ok := store.BloomPartOf(s.Name); ok {
			e.bloomParts++
		}
	case "hash":
		if s.Field == store.BloomLayout {
			e.bloomMeta++
		}
	case "zset":
		e.addScores(s)
	}
}

func (e *evidence) addTTL(s Sample) {
	if s.TTL < 0 {
		e.noTTL++
		return
	}
	if e.withTTL == 0 || s.TTL < e.ttlMin {
		e.ttlMin = s.TTL
	}
	e.withTTL++
	e.ttlMax = max(e.ttlMax, s.TTL)
	if !s.window.IsZero() {
		r := s.Now.Add(s.TTL).Sub(s.window)
		if e.retN == 0 || r < e.retMin {
			e.retMin = r
		}
		e.retN++
		e.retMax = max(e.retMax, r)
	}
}

func (e *evidence) addString(s Sample) {
	v := s.Value
	switch {
	case strings.HasPrefix(v, "HYLL"):
		e.hll++
	case s.Len <= 20 && isInteger(v):
		n, _ := strconv.ParseInt(v, 10, 64)
		if e.ints == 0 || n < e.intMin {
			e.intMin = n
		}
		e.ints++
		e.intMax = max(e.intMax, n)
	case binaryValue(v):
		e.binary++
		e.nonInts++
	case randomToken(v, s.Len):
		e.tokens++
		e.nonInts++
	default:
		e.nonInts++
	}
}

// addScores places a sorted set's newest score against the server's clock, in the unit it
// plausibly is.
func (e *evidence) addScores(s Sample) {
	if s.Len == 0 {
		return
	}
	u, ok := store.GuessUnit(s.MaxScore, s.Now)
	if !ok || !u.Plausible(s.MinScore, s.Now) {
		e.notTime++
		return
	}
	if e.units == nil {
		e.units = map[store.ScoreUnit]int{}
	}
	e.units[u]++
	e.noteUnitKey(u, s.Name)
	newest, oldest := u.Time(s.MaxScore), u.Time(s.MinScore)
	e.spanMax = max(e.spanMax, newest.Sub(oldest))
	switch d := newest.Sub(s.Now); {
	case d > time.Second:
		e.ahead++
	case d >= -recentSpan:
		e.recent++
	default:
		e.past++
	}
}

// binaryValue reports whether a string's first bytes are data, not text: invalid UTF-8, or
// control bytes other than whitespace (a bitmap's bytes are mostly NUL and low values).
func binaryValue(v string) bool {
	if !utf8.ValidString(v) {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return true
		}
	}
	return false
}

func isInteger(v string) bool {
	if v == "" {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 64)
	return err == nil
}

// randomToken reports whether v looks like a holder token: a UUID, hex, or a long run of
// letters, digits and a few punctuation marks with no spaces.
func randomToken(v string, n int64) bool {
	if n < 8 || n > 128 || strings.ContainsAny(v, " {}[]\"'<>") {
		return false
	}
	digits, letters := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == '-' || c == '_' || c == ':' || c == '.':
		default:
			return false
		}
	}
	return digits > 0 && letters > 0
}

func (e *evidence) merge(o *evidence) {
	e.sampled += o.sampled
	e.gone += o.gone
	if o.lastNow.After(e.lastNow) {
		e.lastNow = o.lastNow
	}
	for t, n := range o.types {
		if e.types == nil {
			e.types = map[string]int{}
		}
		e.types[t] += n
	}
	if o.withTTL > 0 && (e.withTTL == 0 || o.ttlMin < e.ttlMin) {
		e.ttlMin = o.ttlMin
	}
	if o.retN > 0 && (e.retN == 0 || o.retMin < e.retMin) {
		e.retMin = o.retMin
	}
	e.noTTL += o.noTTL
	e.withTTL += o.withTTL
	e.ttlMax = max(e.ttlMax, o.ttlMax)
	e.retN += o.retN
	e.retMax = max(e.retMax, o.retMax)
	if o.ints > 0 && (e.ints == 0 || o.intMin < e.intMin) {
		e.intMin = o.intMin
	}
	e.ints += o.ints
	e.nonInts += o.nonInts
	e.hll += o.hll
	e.bloomMeta += o.bloomMeta
	e.bloomParts += o.bloomParts
	e.binary += o.binary
	e.tokens += o.tokens
	e.intMax = max(e.intMax, o.intMax)
	e.ahead += o.ahead
	e.recent += o.recent
	e.past += o.past
	e.notTime += o.notTime
	for u, n := range o.units {
		if e.units == nil {
			e.units = map[store.ScoreUnit]int{}
		}
		e.units[u] += n
	}
	for u, names := range o.unitKeys {
		for _, name := range names {
			e.noteUnitKey(u, name)
		}
	}
	e.spanMax = max(e.spanMax, o.spanMax)
	e.lenMax = max(e.lenMax, o.lenMax)
	e.bytes += o.bytes
	e.bytesN += o.bytesN
	if e.bytesErr == "" {
		e.bytesErr = o.bytesErr
	}
}

// present is how many samples were still there when read.
func (e *evidence) present() int { return e.sampled - e.gone }

// mainType is the type most samples had, and its share of them.
func (e *evidence) mainType() (string, float64) {
	best, n := "", 0
	for t, c := range e.types {
		if c > n || c == n && t < best {
			best, n = t, c
		}
	}
	if e.present() == 0 {
		return "", 0
	}
	return best, float64(n) / float64(e.present())
}

// reading is what most samples held, to tell groups apart: their type, and for strings
// "int", "hll", "binary" or "text"; "" before any sample.
func (e *evidence) reading() string {
	t, _ := e.mainType()
	if t != "string" {
		return t
	}
	switch n := e.present(); {
	case e.ints*2 > n:
		return "int"
	case e.hll*2 > n:
		return "hll"
	case e.binary*2 > n:
		return "binary"
	}
	return "text"
}

// unit is the score unit every sampled sorted set was in; AutoUnit when they disagree (each
// key is then read in its own unit) or none was a time.
func (e *evidence) unit() store.ScoreUnit {
	if len(e.units) != 1 {
		return store.AutoUnit
	}
	for u := range e.units {
		return u
	}
	return store.AutoUnit
}

// bytesPerKey is the mean MEMORY USAGE of the samples, or NaN when none was read.
func (e *evidence) bytesPerKey() float64 {
	if e.bytesN == 0 {
		return math.NaN()
	}
	return float64(e.bytes) / float64(e.bytesN)
}
