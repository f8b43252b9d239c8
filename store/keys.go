package store

import (
	"strconv"
	"strings"
	"sync"
)

// Key names are built from a Family's Pattern (pattern.go); this file holds what Redis itself
// does with a key name: the Cluster slot it hashes to.

// slotCount is the number of Redis Cluster hash slots.
const slotCount = 16384

// Slot returns the Redis Cluster hash slot of key, honouring hash tags: when the key holds a
// "{...}" with something between the braces, only that part is hashed.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key)) % slotCount
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021), the hash Redis Cluster uses for slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// The keys hourglass writes for itself are spelled in this file, once: each with a builder and,
// where a sweep must recognise it, a parser (IsOwnKey, IsCompanionKey) that the scanner uses.

// ownPrefix starts hourglass's own bookkeeping: the writers' sequence records and the limiters'
// hourly decision counters. Sweeps skip these keys (IsOwnKey); they are not a user's data.
const ownPrefix = "hourglass:"

// seqKeyPrefix starts the keys where writers record the last call they applied (flush.go).
const seqKeyPrefix = ownPrefix + "seq:"

// limitKeyPattern is the pattern of a limiter's hourly decision counters (limiter.go).
const limitKeyPattern = ownPrefix + "limit:{<limiter>}:<outcome>:<window>"

// IsOwnKey reports whether key is hourglass's own bookkeeping, which sweeps skip.
func IsOwnKey(key string) bool { return strings.HasPrefix(key, ownPrefix) }

// seqKey names the sequence key of a writer's lane in one slot. Its hash tag routes it to that
// slot, so one script call can read it alongside the counters it guards.
func seqKey(writer string, lane, slot int) string {
	return seqKeyPrefix + "{" + slotTag(slot) + "}:" + writer + ":" + strconv.Itoa(lane)
}

var (
	slotTagsOnce sync.Once
	slotTags     [slotCount]string
)

// slotTag returns a short string that hashes to slot, found once for all slots by counting up
// in base 36 (about 160,000 tries fill all 16,384 slots).
func slotTag(slot int) string {
	slotTagsOnce.Do(func() {
		left := slotCount
		for i := 0; left > 0; i++ {
			s := strconv.FormatInt(int64(i), 36)
			if n := int(crc16(s)) % slotCount; slotTags[n] == "" {
				slotTags[n] = s
				left--
			}
		}
	})
	return slotTags[slot]
}

// The suffixes of a queue's companion keys, which live in its hash slot.
const (
	inFlightSuffix   = "inflight"       // a delay queue's claimed tasks
	processingSuffix = "processing"     // a list queue's popped tasks
	testQueueSuffix  = "hourglass-test" // the test queue inject drives beside a real one
)

// InFlightKey names a delay queue's in-flight set: its claimed tasks and their deadlines.
func InFlightKey(queue string) string { return companionKey(queue, inFlightSuffix) }

// ProcessingKey names a list queue's processing list: the tasks popped and not yet acknowledged.
func ProcessingKey(list string) string { return companionKey(list, processingSuffix) }

// TestQueueKey names the test queue beside queue that test traffic drives on a real Redis: a
// consumer there claims and acknowledges only its own tasks, never the real ones.
func TestQueueKey(queue string) string { return companionKey(queue, testQueueSuffix) }

// IsCompanionKey reports whether key is a queue's companion (its in-flight set, processing list
// or test queue), which a queue pattern's last placeholder would otherwise take for a queue.
func IsCompanionKey(key string) bool {
	for _, suffix := range []string{inFlightSuffix, processingSuffix, testQueueSuffix} {
		if strings.HasSuffix(key, ":"+suffix) {
			return true
		}
	}
	return false
}

// testPrefix marks a name or dims value that test traffic uses on a real Redis, so its keys are
// never a real user's, lock's or limiter's.
const testPrefix = "hourglass-test-"

// TestValue is value as test traffic uses it on a real Redis: "hourglass-test-<value>".
func TestValue(value string) string { return testPrefix + value }

// TestName is a limiter's name for test traffic's decisions, so they are counted apart.
func TestName(name string) string { return name + "-" + testQueueSuffix }

// benchPrefix starts every key `hourglass bench` writes, bare or inside a hash tag, so bench can
// delete exactly its own keys from a server it shares (BenchMatches).
const benchPrefix = "bench:"

// BenchKey names a key bench writes: "bench:<name>". Put it in braces for a hash tag.
func BenchKey(name string) string { return benchPrefix + name }

// BenchMatches are the SCAN MATCH patterns that find the keys BenchKey names, bare or tagged.
func BenchMatches() []string { return []string{benchPrefix + "*", "{" + benchPrefix + "*"} }

// CompanionQueue reads key as the companion of one of hourglass's queues (InFlightKey,
// ProcessingKey, TestQueueKey) and returns that queue's key, so a sweep can count the companion
// with its queue.
func CompanionQueue(key string) (string, bool) {
	for _, suffix := range []string{inFlightSuffix, processingSuffix, testQueueSuffix} {
		if q, ok := companionBase(key, suffix); ok {
			return q, true
		}
	}
	return "", false
}

// companionBase reads key as companionKey(base, suffix) and returns base: the name in the braces
// first ("{q}:suffix" is q's), else the name before ":suffix".
func companionBase(key, suffix string) (string, bool) {
	base, ok := strings.CutSuffix(key, ":"+suffix)
	if !ok || base == "" {
		return "", false
	}
	if q, ok := strings.CutPrefix(base, "{"); ok && strings.HasSuffix(q, "}") {
		if q = q[:len(q)-1]; q != "" && companionKey(q, suffix) == key {
			return q, true
		}
	}
	if companionKey(base, suffix) == key {
		return base, true
	}
	return "", false
}

// companionKey names a key that must live in key's hash slot (a queue's in-flight set, its
// processing list): key with suffix when key has a hash tag, else key wrapped as the tag, since
// "{K}:suffix" hashes exactly as "K" does. A key whose braces Redis does not read as a tag (an
// empty "{}") is wrapped too when that keeps the slot. A key that holds a '}' but no tag ("x}{",
// "{}") has no such name: its companion is key:suffix, in another slot, and a cluster refuses the
// queue's scripts (CROSSSLOT); give such a queue a hash tag.
func companionKey(key, suffix string) string {
	plain, wrapped := key+":"+suffix, "{"+key+"}:"+suffix
	if hasTag(key) {
		return plain
	}
	if Slot(wrapped) == Slot(key) {
		return wrapped
	}
	return plain
}

// hasTag reports whether Redis hashes only part of key: a "{" followed later by a "}" with
// something between them.
func hasTag(key string) bool {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		end := strings.IndexByte(key[open+1:], '}')
		return end > 0
	}
	return false
}

// Companion names a queue's companion key (its in-flight or processing tasks) from the queue's
// key, for queues another program writes: a template in which "<key>" stands for the queue's key
// ("<key>:wip", "{<key>}:unacked") or a fixed name ("unacked"). The zero Companion is
// hourglass's own (InFlightKey, ProcessingKey); one parsed from "" names none.
type Companion struct {
	template string
	none     bool
}

// KeyPlaceholder stands for the queue's key in a Companion's template.
const KeyPlaceholder = "<key>"

// ParseCompanion reads a companion template; "" means the queue has none.
func ParseCompanion(template string) Companion {
	return Companion{template: template, none: template == ""}
}

// Of names the companion of the queue at key; own is hourglass's own naming, for the zero
// Companion. "" means none.
func (c Companion) Of(key string, own func(string) string) string {
	switch {
	case c.none:
		return ""
	case c.template == "":
		return own(key)
	}
	return strings.ReplaceAll(c.template, KeyPlaceholder, key)
}

// PerKey reports whether the template names a different key for each queue.
func (c Companion) PerKey() bool {
	return c.template == "" && !c.none || strings.Contains(c.template, KeyPlaceholder)
}

// String is the template as configured ("" for none, "<own>" for hourglass's own).
func (c Companion) String() string {
	if c.template == "" && !c.none {
		return "<own>"
	}
	return c.template
}

// A Bloom filter's keys (bloom.go): its metadata hash is its name, and sub-filter i's bitmap is
// named in that name's hash slot as a companion is (companionKey).

// BloomPartKey names sub-filter i of the filter at key, in key's hash slot.
func BloomPartKey(key string, i int) string { return companionKey(key, strconv.Itoa(i)) }

// BloomPartOf reads a sub-filter's key: the filter's key and the sub-filter's index. ("{x}:0" is
// read as a part of "x", not of "{x}": the two names share their sub-filters' keys.)
func BloomPartOf(key string) (filter string, i int, ok bool) {
	cut := strings.LastIndexByte(key, ':')
	if cut < 0 {
		return "", 0, false
	}
	num := key[cut+1:]
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || i >= BloomMaxFilters || strconv.Itoa(i) != num {
		return "", 0, false
	}
	filter, ok = companionBase(key, num)
	return filter, i, ok
}
