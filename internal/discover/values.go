package discover

import (
	"fmt"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// maxLockTTL is the longest TTL a lock is taken for, unless its name says lock: a holder keeps a
// lock for seconds or minutes, while tokens (sessions, CSRF, verification) live longer.
const maxLockTTL = 10 * time.Minute

// maxHitCount is the largest smallest value a group of limiter counts may show: a fixed-window
// limiter's key starts at its window's first hit, so some keys hold small counts; strings whose
// smallest value is larger are ids, times or totals a cache maps names to.
const maxHitCount = 999

// inferScores decides a group of sorted sets by where their scores lie against the server clock.
func inferScores(gr *Group, sh *shape, l layout) {
	e := &sh.ev
	timed := e.ahead + e.recent + e.past
	if e.notTime > timed {
		gr.Kind, gr.Confidence = KindUndecided, Low
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("sorted sets whose scores are not times in any unit (%d of %d): a ranking, not a queue or limiter", e.notTime, e.notTime+timed))
		return
	}
	if timed == 0 {
		gr.Kind, gr.Confidence = KindUndecided, Low
		gr.Evidence = append(gr.Evidence, "every sampled sorted set was empty")
		return
	}
	u := e.unit()
	scores := fmt.Sprintf("scores: %s; newest ahead of the server clock in %d, within the last day in %d, older in %d of %d", unitsText(e), e.ahead, e.recent, e.past, timed)
	gr.Evidence = append(gr.Evidence, scores)
	expiring := e.withTTL*2 >= e.present()
	switch {
	case e.ahead*5 >= timed:
		gr.Kind, gr.Confidence = KindDelayQueue, High
		if e.ahead*2 < timed {
			gr.Confidence = Medium
		}
	case expiring && e.past == 0, perEntity(sh, l) && e.spanMax <= 24*time.Hour:
		slidingLimiter(gr, sh, l, expiring)
		return
	case perEntity(sh, l) || e.spanMax > 7*24*time.Hour:
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("times all in the past, spanning up to %s in one key, %s: a log or an index by time, not a delay queue (whose tasks fall due ahead of now) or a sliding limiter (whose hits lie within its window)", short(e.spanMax), perWhat(sh, l)))
		return
	case e.past > 0 || e.spanMax > 24*time.Hour:
		gr.Kind, gr.Confidence = KindUndecided, Low
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("times all in the past, spanning up to %s in one key, the newest over a day old in %d of %d: a delay queue whose consumer stopped, or an index by time; not decided", short(e.spanMax), e.past, timed))
		return
	default:
		gr.Kind, gr.Confidence = KindDelayQueue, Medium
		gr.Evidence = append(gr.Evidence, "every task is overdue, the oldest by a day or less: a queue backing up")
	}
	none := ""
	gr.Entry = &Entry{Table: "delay_queue", ScoreUnit: u.String(), InFlight: &none}
	if sh.companions&compInFlight != 0 {
		gr.Entry.InFlight = nil
		gr.Evidence = append(gr.Evidence, "in-flight sets named as hourglass names them ({<queue>}:inflight): hourglass's own delay queue, its claimed tasks read there")
	}
	keyOrPattern(gr.Entry, l, sh)
}

// perEntity reports whether a group is one key per user, device or address: a placeholder that
// holds numbers, ids, hex, UUIDs or IPs, over three keys or more. A delay queue is one key, or
// one per topic; a sliding limiter is one per whoever it limits.
func perEntity(sh *shape, l layout) bool {
	if sh.keys < 3 {
		return false
	}
	for i, c := range sh.skel.classes {
		switch c {
		case clNum, clID, clHex, clUUID, clIP:
			if l.varies[i] {
				return true
			}
		}
	}
	return false
}

// slidingLimiter proposes a sliding limiter for sorted sets of recent times: its window from the
// keys' TTLs (hourglass's and most limiters expire a key a window after its last hit), or from
// the widest span of times in one key when they have none.
func slidingLimiter(gr *Group, sh *shape, l layout, expiring bool) {
	e := &sh.ev
	gr.Kind, gr.Confidence = KindSlidingLimiter, Medium
	window := roundUp(max(e.ttlMax, e.spanMax), time.Second)
	line := fmt.Sprintf("recent times with TTLs: a sliding limiter; window from the longest TTL (%s), limit = the most hits seen in one key (%s): set your real limit", short(e.ttlMax), format.Commas(e.lenMax))
	if !expiring {
		window = niceWindow(e.spanMax)
		line = fmt.Sprintf("times within %s of each other, one sorted set per %s, without TTLs: a sliding limiter whose idle keys never expire (the newest hit over a day old in %d of %d); window from the widest span of times in one key, limit = the most hits seen in one key (%s): set your real ones", short(e.spanMax), entityName(sh, l), e.past, e.ahead+e.recent+e.past, format.Commas(e.lenMax))
	}
	gr.Entry = &Entry{Table: "limiter", Pattern: l.text, LimiterKind: "sliding", Window: duration(window), Limit: max(1, e.lenMax), Guessed: []string{"window", "limit"}}
	gr.Evidence = append(gr.Evidence, line)
}

// perWhat says whether a group is one key per entity.
func perWhat(sh *shape, l layout) string {
	if perEntity(sh, l) {
		return "one key per " + entityName(sh, l)
	}
	return "one key"
}

// entityName is the first placeholder of a per-entity group, as "<name>".
func entityName(sh *shape, l layout) string {
	for i, v := range l.varies {
		if v && sh.skel.classes[i] != clWord {
			return "<" + l.names[i] + ">"
		}
	}
	return "key"
}

// inferString decides a group of strings whose names hold no time token.
func inferString(gr *Group, sh *shape, l layout) {
	e := &sh.ev
	n := float64(e.present())
	ints := float64(e.ints) >= 0.9*n
	brief := float64(e.withTTL) >= 0.9*n && e.ttlMax <= 24*time.Hour
	switch {
	case mixedInts(e):
		undecidedMixed(gr, e)
	case ints && brief && lockName(l.text):
		inferLock(gr, sh, l, "integers in keys named as locks")
	case float64(e.tokens) >= 0.9*n && brief && !lockName(l.text) && e.ttlMax > maxLockTTL:
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("random tokens with TTLs up to %s, in names that do not say lock: tokens (sessions, CSRF, verification), not locks' holders, which live minutes", short(e.ttlMax)))
	case ints && brief && e.intMin <= maxHitCount:
		gr.Kind, gr.Confidence = KindFixedLimiter, Medium
		window := niceWindow(e.ttlMax)
		gr.Entry = &Entry{Table: "limiter", Pattern: l.text, LimiterKind: "fixed", Window: duration(window), Limit: max(1, e.intMax), Guessed: []string{"window", "limit"}}
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("small integers (%s to %s) with TTLs up to %s: a fixed-window limiter; window = the longest TTL rounded, limit = the highest count seen: set your real ones", format.Commas(e.intMin), format.Commas(e.intMax), short(e.ttlMax)))
	case ints && brief:
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("integers from %s to %s with TTLs up to %s: too large to be a limiter's hit counts, whose keys start at 1: codes, ids or times kept under these names", format.Commas(e.intMin), format.Commas(e.intMax), short(e.ttlMax)))
	case ints:
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, "integers with no time window in their names and no short TTL: totals, not windowed counters")
	case float64(e.tokens) >= 0.9*n && brief:
		inferLock(gr, sh, l, "random tokens")
	case e.hll > 0 && float64(e.hll) >= 0.9*n:
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, "HyperLogLogs with no time window in their names: a [[unique]] family needs one")
	default:
		gr.Kind, gr.Confidence = KindOther, High
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("values: %d of %d sampled are text or data, not counts: cache or session values", e.nonInts, e.present()))
	}
}

// mixedInts reports whether the strings sampled are integers in some keys and not in others, too
// many of each for either reading.
func mixedInts(e *evidence) bool {
	n := float64(e.present())
	return e.ints > 0 && e.nonInts > 0 && float64(e.ints) < 0.9*n && float64(e.nonInts) < 0.9*n
}

// undecidedMixed says that a group's strings are sometimes integers, and decides nothing.
func undecidedMixed(gr *Group, e *evidence) {
	gr.Kind, gr.Confidence = KindUndecided, Low
	gr.Evidence = append(gr.Evidence, fmt.Sprintf("values: an integer in %d of %d sampled, text or data in %d: a string that is sometimes an integer is not one structure (a counter some writer overwrites, or a cache); not decided", e.ints, e.present(), e.nonInts))
}

// lockName reports whether a pattern's words say its keys are locks ("lock:<order>",
// "<counter>_lock", "job:<id>:mutex"; not "blocked").
func lockName(p string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(literalText(p)), func(r rune) bool { return r < 128 && isSep(byte(r)) }) {
		switch w {
		case "lock", "locks", "locked", "mutex", "semaphore", "lease", "leases":
			return true
		}
	}
	return false
}

// literalText drops a pattern's placeholders, keeping its literal text.
func literalText(p string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '<':
			depth++
		case c == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// inferLock proposes a lock entry for keys of layout l (no <window>: a lock's pattern has none)
// whose values are what.
func inferLock(gr *Group, sh *shape, l layout, what string) {
	e := &sh.ev
	gr.Pattern = l.text
	gr.Kind, gr.Confidence = KindLock, Medium
	if lockName(l.text) {
		gr.Confidence = High
	}
	gr.Entry = &Entry{Table: "lock", Pattern: l.text}
	gr.Evidence = append(gr.Evidence, fmt.Sprintf("%s with TTLs up to %s: locks and their holders", what, short(e.ttlMax)))
}

// listQueue proposes a list queue, hourglass's own when its processing lists were seen; lists
// kept one per user (recent items, feeds) are not queues unless their names say so.
func listQueue(gr *Group, sh *shape, l layout) {
	if perEntity(sh, l) && !taskName(l.text) && sh.companions == 0 {
		gr.Kind, gr.Confidence = KindOther, Medium
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("lists of up to %s elements, one per %s, in names that do not say queue: items kept per %s (recent, feed), not queues, which are one list or one per topic", format.Commas(sh.ev.lenMax), entityName(sh, l), entityName(sh, l)))
		return
	}
	gr.Kind, gr.Confidence = KindListQueue, Medium
	if taskName(l.text) {
		gr.Confidence = High
	}
	gr.Evidence = append(gr.Evidence, fmt.Sprintf("lists of up to %s elements", format.Commas(sh.ev.lenMax)))
	none := ""
	gr.Entry = &Entry{Table: "list_queue", Processing: &none}
	if sh.companions&compProcessing != 0 {
		gr.Confidence, gr.Entry.Processing = High, nil
		gr.Evidence = append(gr.Evidence, "processing lists named as hourglass names them ({<queue>}:processing): hourglass's own list queue, its popped tasks read there")
	}
	keyOrPattern(gr.Entry, l, sh)
}

// redisRateNote is what redis_rate's keys cannot tell.
func redisRateNote(lib *Library) string {
	if lib.Limiter != limits.RedisRate {
		return ""
	}
	return "redis_rate keeps a GCRA arrival time per key, not a count: its keys hold no limit; set your rate, period (window) and burst"
}
