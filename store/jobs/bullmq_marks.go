package jobs

// BullMQ's marks: how its keys are found under a prefix other than "bull" (under "bull" its keys
// are BullMQ's by name). A prefix is BullMQ's once a queue's meta hash (<prefix>:<queue>:meta)
// has the version field BullMQ's Queue wrote ("bullmq:<version>"), read from the sampled hash.
// A meta hash, id counter and events stream by name alone are an event-sourced app's as well.

import (
	"fmt"
	"strings"
)

// BullMQQueueKeyOf reads key as one of the keys BullMQ keeps once per queue, under any prefix:
// <prefix>:<queue>:meta (hash), :id (string) or :events (stream), with that Redis type. BullMQ 5
// refuses ':' in a queue name, so the queue is the segment before the suffix and the prefix
// everything before it ("bull", "{bull}" in a cluster, "myapp:bull").
func BullMQQueueKeyOf(key string) (prefix, queue, suffix, typ string, ok bool) {
	if key == "" || !strings.ContainsRune("ads", rune(key[len(key)-1])) { // what the suffixes end in
		return "", "", "", "", false
	}
	for _, s := range bullmqOncePerQueue {
		rest, found := strings.CutSuffix(key, s.suffix)
		if !found {
			continue
		}
		s.suffix = s.suffix[1:]
		i := strings.LastIndexByte(rest, ':')
		if i <= 0 || i == len(rest)-1 {
			return "", "", "", "", false
		}
		return rest[:i], rest[i+1:], s.suffix, s.typ, true
	}
	return "", "", "", "", false
}

// bullmqOncePerQueue are the suffixes of the keys BullMQ keeps once per queue, with their types.
var bullmqOncePerQueue = []struct{ suffix, typ string }{{":meta", "hash"}, {":id", "string"}, {":events", "stream"}}

// BullMQMetaField is the field of a queue's meta hash where BullMQ's Queue writes
// "bullmq:<version>" (Queue.getVersion reads it back).
const BullMQMetaField = "version"

// IsBullMQVersion reports whether v, a meta hash's BullMQMetaField, is BullMQ's.
func IsBullMQVersion(v string) bool { return strings.HasPrefix(v, "bullmq:") }

// BullMQKeyOf reads key as one of the keys BullMQ keeps for a queue as a whole, under any prefix,
// as BullMQQueueKeyOf does: the lists and sorted sets of its jobs (wait, active, paused,
// prioritized, delayed, completed, failed, waiting-children), its meta, id and events, and the
// keys no state is counted from (marker, stalled, stalled-check, limiter, pc, repeat, metrics:…).
// A job's hash and the keys named after it (<queue>:<id>, <queue>:<id>:lock, …) are not, but for
// a flow parent's <id>:failed, which reads by name as the failed set of a queue "<id>".
func BullMQKeyOf(key string) (prefix, queue string, ok bool) {
	for _, s := range bullmqQueueKeys { // longest first: "metrics:failed" before "failed"
		rest, found := strings.CutSuffix(key, s)
		if !found || len(rest) < 2 || rest[len(rest)-1] != ':' {
			continue
		}
		rest = rest[:len(rest)-1]
		if i := strings.LastIndexByte(rest, ':'); i > 0 && i < len(rest)-1 {
			return rest[:i], rest[i+1:], true
		}
	}
	return "", "", false
}

// standsForRegistry reports whether key is one of the keys BullMQ keeps once per queue (its meta
// hash, its id counter, its event stream): BullMQ has no registry of queues, and these stand for
// one.
func (j bullmqJobs) standsForRegistry(key string) bool {
	for _, s := range bullmqOncePerQueue {
		if strings.HasSuffix(key, s.suffix) {
			return true
		}
	}
	return false
}

// bullmqBit is the bit of a once-per-queue key's suffix among a proof's marks.
func bullmqBit(suffix string) uint8 {
	for i, s := range bullmqOncePerQueue {
		if s.suffix[1:] == suffix {
			return 1 << i
		}
	}
	return 0
}

// bullmqMetaBit is the meta hash's bit, the mark that starts and decides a prefix's evidence.
var bullmqMetaBit = bullmqBit("meta")

// bullmqMarker is BullMQ's Marks.
type bullmqMarker struct{}

var _ Marks = bullmqMarker{}

func (bullmqMarker) Mark(key string) (Mark, bool) {
	p, _, suffix, _, ok := BullMQQueueKeyOf(key)
	if !ok {
		return Mark{}, false
	}
	m := Mark{Prefix: p, Strong: suffix == "meta"}
	if m.Strong {
		m.Field = BullMQMetaField
	}
	return m, true
}

func (bullmqMarker) Named(key string) (string, bool) {
	p, _, ok := BullMQKeyOf(key)
	return p, ok
}

func (bullmqMarker) Proof(prefix string) Proof { return &bullmqProof{prefix: prefix} }

// bullmqProof is what a prefix's keys showed of BullMQ.
type bullmqProof struct {
	prefix string
	// marks are the once-per-queue keys seen by name (bullmqBit), bad those a sample showed of
	// another type.
	marks, bad uint8
	version    string // a meta hash's version field naming BullMQ
	read       bool   // a meta hash's sample was read, whatever it showed
}

func (p *bullmqProof) Saw(key string) {
	_, _, suffix, _, _ := BullMQQueueKeyOf(key)
	p.marks |= bullmqBit(suffix)
}

func (p *bullmqProof) Sampled(s MarkSample) {
	_, _, suffix, typ, _ := BullMQQueueKeyOf(s.Name)
	p.read = p.read || suffix == "meta"
	if s.Type != typ {
		p.bad |= bullmqBit(suffix)
	} else if suffix == "meta" && IsBullMQVersion(s.Field) && p.version == "" {
		p.version = strings.Clone(s.Field)
	}
}

func (p *bullmqProof) Strong() bool { return p.marks&bullmqMetaBit != 0 }

func (p *bullmqProof) Trusted() bool { return p.version != "" && p.bad&bullmqMetaBit == 0 }

func (p *bullmqProof) Pending() bool { return p.Strong() && !p.Trusted() && !p.read }

func (p *bullmqProof) Queues() []string { return nil }

func (p *bullmqProof) Evidence() string {
	line := fmt.Sprintf("BullMQ's keys under the prefix %q", p.prefix)
	if p.Trusted() {
		return line + fmt.Sprintf(": a queue's meta hash says %s (its version field)", p.version)
	}
	return line + ": not trusted: no sampled meta hash has BullMQ's version field"
}
