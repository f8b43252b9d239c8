package scanner

import (
	"slices"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// A sweep with an Inferrer (Options.Infer) runs on entries inferred from the keys themselves: the
// console, snapshot and serve pointed at a Redis with no config. As the sweep goes, what discover
// makes of the keys no entry claims is handed to the Inferrer, which adopts the entries it trusts;
// the sweep then counts their keys under them. A sweep that has seen little yet starts over with
// them (little is lost); one further on keeps going, and the entries count from the next sweep
// (Take runs that next sweep itself).

// Inferrer adopts entries for the keys no entry claims.
type Inferrer interface {
	// Adopt is handed what the sweep found so far of the unclaimed keys (scaled to the keyspace
	// while the sweep is under way; complete once it has seen them all) and returns the entries
	// it adopts of it now: none when nothing new is trusted. An entry once adopted is never
	// handed back again, so an Adopter should wait for a group that may still widen (one key
	// seen of a shape many keys may share) until the sweep is complete.
	Adopt(r discover.Result, complete bool) Adoption
}

// Adoption is entries an Inferrer adopts: the families and structures to watch, and the
// discover entries they were parsed from (for the front ends to list).
type Adoption struct {
	Families   []*store.Family
	Structures Structures
	Entries    []discover.Entry
}

// Empty reports whether a adopts nothing.
func (a Adoption) Empty() bool { return len(a.Entries) == 0 }

// The schedule of the Inferrer's turns: first once the sweep has seen minInferKeys keys (or
// all there are), then each time the keys it has seen double, and at its end. Discover's groups
// change most early on, and a turn costs a pass over them.
const minInferKeys = 1000

// A sweep that has seen fewer than youngKeys keys, or less than youngShare of the keyspace,
// starts over when entries are adopted: at most that much is read twice.
const (
	youngKeys  = 20_000
	youngShare = 0.1
)

// Inference is a sweep's side of an Inferrer: when its next turn is due, and what was adopted.
type Inference struct {
	inf     Inferrer
	next    int64 // keys seen at which the next turn is due
	adopted []discover.Entry
	pending Adoption // adopted while the sweep was too far on: counted from the next sweep
	// counting is how many of adopted the sweep under way counts; shown how many the last
	// complete sweep's figures count (-1 before there is one).
	counting, shown int
}

// NewInference returns the turns of inf for a sweep and those after it; nil, which adopts
// nothing, when inf is nil.
func NewInference(inf Inferrer) *Inference {
	if inf == nil {
		return nil
	}
	return &Inference{inf: inf, next: minInferKeys, shown: -1}
}

// Turn asks the Inferrer for entries when one is due: the sweep s has seen seen keys, and done
// says it reached its end. restart is what to start over with now (empty: go on); what is adopted
// too late for s waits in pending.
func (in *Inference) Turn(s *Sweep, seen int64, done bool) (restart Adoption) {
	if in == nil || (!done && seen < in.next) {
		return Adoption{}
	}
	in.next = max(minInferKeys, 2*seen)
	add := in.inf.Adopt(s.unclaimedResult(), done)
	if add.Empty() {
		return Adoption{}
	}
	in.adopted = append(in.adopted, add.Entries...)
	if !done && young(s.Progress(), seen) {
		in.counting += len(add.Entries)
		return add
	}
	in.pending = in.pending.with(add)
	return Adoption{}
}

// postpone moves what Turn returned to start over with to pending: the sweep ended before it
// could.
func (in *Inference) postpone(a Adoption) {
	in.counting -= len(a.Entries)
	in.pending = in.pending.with(a)
}

// Completed records that the sweep under way is complete and its figures are the ones shown.
func (in *Inference) Completed() {
	if in != nil {
		in.shown = in.counting
	}
}

// young reports whether a sweep that has seen seen keys of what p says the masters hold is early
// enough to start over.
func young(p Progress, seen int64) bool {
	if seen < youngKeys {
		return true
	}
	var pop int64
	for _, mp := range p.Masters {
		pop += mp.DBSize
	}
	return pop > 0 && float64(seen) < youngShare*float64(pop)
}

// TakePending returns what waits for the next sweep, and forgets it.
func (in *Inference) TakePending() Adoption {
	if in == nil {
		return Adoption{}
	}
	p := in.pending
	in.pending = Adoption{}
	in.counting += len(p.Entries)
	return p
}

// State is what the front ends are told: nil without an Inferrer.
func (in *Inference) State() *snapshot.Inferred {
	if in == nil {
		return nil
	}
	counted := in.counting
	if in.shown >= 0 {
		counted = in.shown
	}
	return &snapshot.Inferred{Entries: slices.Clone(in.adopted), Pending: len(in.adopted) - counted}
}

// with returns a and b together, in new slices.
func (a Adoption) with(b Adoption) Adoption {
	return Adoption{
		Families:   slices.Concat(a.Families, b.Families),
		Structures: a.Structures.With(b.Structures),
		Entries:    slices.Concat(a.Entries, b.Entries),
	}
}
