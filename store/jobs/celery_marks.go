package jobs

// Celery's marks: how its keys are found under a global_keyprefix (with none its keys are
// Celery's by name). A prefix is Celery's once an exchange's binding set
// (<prefix>_kombu.binding.<exchange>) has a member, read from the sampled set, as kombu writes a
// binding ("<routing key>\x06\x16<pattern>\x06\x16<queue>").

import (
	"fmt"
	"slices"
	"strings"
)

// CeleryBindingOf reads key as one of kombu's exchange bindings, "<prefix>_kombu.binding.<exchange>"
// (a set), under any global_keyprefix: the prefix is all before "_kombu.binding.", "" for none.
// task says whether the exchange's queues hold tasks (not Celery's celeryev or pidbox fanouts).
func CeleryBindingOf(key string) (prefix, exchange string, task, ok bool) {
	i := strings.Index(key, kombuBinding)
	if i < 0 || i+len(kombuBinding) == len(key) {
		return "", "", false, false
	}
	ex := key[i+len(kombuBinding):]
	return key[:i], ex, !celeryNotTaskExchanges[ex], true
}

// IsKombuBinding reports whether member, one of a binding set's members, is as kombu writes it:
// "<routing key>\x06\x16<pattern>\x06\x16<queue>".
func IsKombuBinding(member string) bool {
	parts := strings.Split(member, kombuSep)
	return len(parts) == 3 && parts[2] != ""
}

// MayBeCelerys reports whether key is named as a key kombu keeps under some global_keyprefix
// whatever the queues are called: the default queue's list (…celery), a priority list
// (…\x06\x16<n>), or the unacked hash, index and mutex.
func MayBeCelerys(key string) bool {
	for _, s := range []string{celeryDefault, "unacked", "unacked_index", "unacked_mutex"} {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	n := len(key)
	return n > 3 && key[n-3:n-1] == kombuSep && key[n-1] >= '1' && key[n-1] <= '9'
}

// celeryMarker is Celery's Marks.
type celeryMarker struct{}

var _ Marks = celeryMarker{}

func (celeryMarker) Mark(key string) (Mark, bool) {
	p, _, _, ok := CeleryBindingOf(key)
	return Mark{Prefix: p, Strong: true, Member: p != ""}, ok
}

func (celeryMarker) Named(key string) (string, bool) {
	if p, _, _, ok := CeleryBindingOf(key); ok {
		return p, true
	}
	return "", MayBeCelerys(key)
}

func (celeryMarker) Proof(prefix string) Proof { return &celeryProof{prefix: prefix} }

// celeryProof is what a global_keyprefix's keys showed of Celery.
type celeryProof struct {
	prefix string
	seen   bool // a binding set was seen by name
	bad    bool // a key named as a binding is not a set
	kombu  bool // a sampled binding set's member is as kombu writes one
	// queues are the task exchanges the bindings named, whose queues' lists are named after
	// them (Celery's default), up to maxMarkQueues.
	queues []string
}

func (p *celeryProof) Saw(key string) {
	p.seen = true
	_, ex, task, _ := CeleryBindingOf(key)
	if task && len(p.queues) < maxMarkQueues && !slices.Contains(p.queues, ex) {
		p.queues = append(p.queues, strings.Clone(ex))
	}
}

func (p *celeryProof) Sampled(s MarkSample) {
	if s.Type != "set" {
		p.bad = true
	} else if IsKombuBinding(s.Member) {
		p.kombu = true
	}
}

func (p *celeryProof) Strong() bool { return p.seen }

func (p *celeryProof) Trusted() bool { return p.kombu && !p.bad }

func (p *celeryProof) Pending() bool { return false }

func (p *celeryProof) Queues() []string { return p.queues }

func (p *celeryProof) Evidence() string {
	line := fmt.Sprintf("kombu's exchange bindings under the global_keyprefix %q", p.prefix)
	switch {
	case p.bad:
		return line + ": not trusted: a key named as a binding is not a set"
	case p.kombu:
		return line + ": a sampled binding set's member is as kombu writes one (routing key, pattern, queue)"
	}
	return line + ": not trusted: no sampled binding set has a member as kombu writes one"
}
