package snapshot

import (
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/store"
)

// Condition is what a Poll found of the watched Redis: what the console's header says of it.
type Condition int

const (
	// Connected: Redis answered the Poll and the sweep keeps to its usual time.
	Connected Condition = iota
	// Late: Redis answers, but the sweep under way has run well past its usual time (see
	// internal/watch's LateFactor): its replies come slowly, or the keyspace grew.
	Late
	// Unreachable: a fault that may pass (a connection refused, lost or timed out, LOADING,
	// TRYAGAIN, CLUSTERDOWN, or no answer within the Poll's time). The console tries again with
	// backoff.
	Unreachable
	// Denied: Redis refused a command to the user hourglass logs in as (NOPERM); ConnState.Refused
	// names it. Polls go on, so the console sees the right given back.
	Denied
	// Failing: another answer that sending again cannot change (WRONGPASS, a script error, an
	// unknown command); ConnState.Err is its one line.
	Failing
)

func (c Condition) String() string {
	switch c {
	case Late:
		return "late"
	case Unreachable:
		return "unreachable"
	case Denied:
		return "denied"
	case Failing:
		return "failing"
	}
	return "connected"
}

// ConnState is the state of the watched Redis as the last Poll found it.
type ConnState struct {
	Condition Condition
	// Err is the fault that ended the Poll (nil when Connected or Late), Class its class, and
	// Refused the command a NOPERM refusal named ("scan"; "key" for a key the user may not touch).
	Err     error
	Class   store.ErrorClass
	Refused string
	// Since is when the Condition began (the snapshot options' clock: the server's time in the
	// console).
	Since time.Time
	// LastSweep is when the last sweep completed; zero when none has yet.
	LastSweep time.Time
	// LateAfter is how long the sweep under way may run (in Polls' time) before it is late; zero
	// while no sweep has completed.
	LateAfter time.Duration
	// Primary is, through Sentinel, the node the Watcher's connections reach: the primary the
	// Sentinels named; "" otherwise. FailoverAt is when a Poll last found it changed (a
	// failover), zero when none has.
	Primary    string
	FailoverAt time.Time
	// Reads is, when the sweeps read from a replica (read_from = "replica"), the node they
	// read from; nil when they read from the primary as configured.
	Reads *ReadState
}

// ReadState is where the sweep and the live reads go when a replica is asked for. A replica
// counts keys the primary has expired until the primary's DEL reaches it, and with its link
// down serves data that no longer moves: one down, promoted or behind is left.
type ReadState struct {
	// Replica is the replica read from; "" when none passes its checks and the reads are on
	// the primary.
	Replica string
	// Lag is how far behind the primary Replica is (the age of the oldest primary offset it
	// has not reached, as the Polls read them).
	Lag time.Duration
	// Left are the replicas left when the reads last moved, each with why ("127.0.0.1:6380
	// promoted"; also "down", "link down", "12s behind").
	Left []string
}

// MinRefresh is the shortest interval between two Polls the console, serve and the config allow:
// faster than a person can read, and each Poll costs the watched Redis a round of reads.
const MinRefresh = 250 * time.Millisecond

// Status is what a Poll returns: the last complete Snapshot and the state of things now.
type Status struct {
	Snapshot *Snapshot // the last complete sweep's; nil until the first completes
	// Partial is, until the first sweep completes, what the sweep under way has seen so far,
	// scaled to the keyspace: its figures are estimates (Scan.Complete is false). Front ends
	// that must not show an estimate (metrics) ignore it.
	Partial *Snapshot
	Sweep   SweepProgress
	Server  ServerInfo
	// Live holds, for the family in focus, its current windows' top dims read again at this Poll
	// (a sweep of a big keyspace takes a while; these are what the screen shows meanwhile).
	Live []LiveWindow
	// Families holds each counter family's current window as its live sample read at this Poll says
	// it is: its total and rate, estimated. So the figures move between sweeps. LiveReads is how
	// many keys those reads took from the sweep's budget.
	Families  []LiveFamily
	LiveReads int
	// Unclaimed is what the sweep under way has found of the keys no entry claims so far (its
	// groups grow as it goes; Snapshot.Unclaimed is the last complete sweep's).
	Unclaimed discover.Result
	// Conn says how Redis answered this Poll: connected, the sweep late, unreachable, or a
	// refusal, with its class and since when. A Poll that fails fills it too.
	Conn ConnState
	// Cost is what watching cost Redis since the last Poll: the keys swept a second and the
	// share of Redis' time hourglass' commands took.
	Cost Cost
	// Inferred, when the watcher runs on entries inferred from the keys (Options.Infer), lists
	// them; nil when they come from a config.
	Inferred *Inferred
}

// LiveWindow is a current window's top dims with values read now, largest first.
type LiveWindow struct {
	Family      string
	Granularity string
	Window      string
	Top         []DimsValue
	ReadAt      time.Time
	// Moved is, in Top's order, how far each value moved since the sweep that completed at
	// SweptAt: the last one completed before this Poll began. (A sweep this Poll completed read
	// its values a moment ago, and counting from it would show nothing moving.)
	Moved   []Moved
	SweptAt time.Time
}

// Moved is how far a live value moved since a sweep; Known is false when that sweep's top list
// did not hold the dims, or had another window, so the value then is not known.
type Moved struct {
	By    int64
	Known bool
}

// SweepProgress describes the sweep under way.
type SweepProgress struct {
	KeysSeen int64
	Started  time.Time
	// Completed is set when this Poll finished a sweep (its Snapshot is the new one).
	Completed bool
}

// LiveFamily is one counter family's current window as its live sample says it is now, read at
// this Poll: the window's total and how fast it grows, each an estimate with its 95% interval.
// The keys with the largest values are read exactly; the others are a priority sample, each
// weighted by its chance to be drawn (docs/estimates.md, "Live rates").
type LiveFamily struct {
	Family      string
	Granularity string // "hour", or "day" for a family without hour windows
	Window      string // as the family formats it
	WindowStart time.Time
	// Keys is the number of the window's keys, and KeysFrom where it comes from: "snapshot" (the
	// last complete sweep, in this window) or "sweep" (the keys the sweep under way has visited
	// so far, when it has seen more). Top+Sampled over Keys is the figures' Coverage.
	Keys     int64
	KeysFrom string
	// Partial is set when no complete sweep has counted this window's keys and the figures
	// could not be scaled to the whole window (DBSIZE unknown): they count only the keys seen
	// so far, and are lower bounds.
	Partial bool
	// Swept is set (below 1) when no complete sweep has counted this window's keys and the
	// figures are scaled to the whole window from the pages swept since it began: it is the
	// share of the masters' keys those pages held. The total is then the window's values as the
	// pages read them plus the growth since, which the live reads estimate.
	Swept   float64
	Top     int // keys read exactly: the window's largest values
	Sampled int // other keys read: the sample
	// Total is the window's total now; RatePerSec how fast it grew between RateSince and ReadAt.
	// Either is nil when it cannot be estimated, with the reason in Note.
	Total      *estimate.Figure
	RatePerSec *estimate.Figure
	RateSince  time.Time
	ReadAt     time.Time
	Note       string
}

// LiveFamily returns the live read of the counter family named name at this Poll, or nil.
func (s Status) LiveFamily(name string) *LiveFamily {
	for i := range s.Families {
		if s.Families[i].Family == name {
			return &s.Families[i]
		}
	}
	return nil
}

// Cost is what the Watcher's commands cost Redis over the last interval between two Polls.
type Cost struct {
	// Interval is the time between the two readings; zero until a Poll has a reading before it
	// (then nothing else here is known).
	Interval time.Duration
	// KeysPerSecond is the keys the sweep visited a second over the interval, on all masters.
	KeysPerSecond float64
	// Share is hourglass' share of one core of Redis over the interval (0.01 is 1%), of the
	// master it cost most on a cluster; ShareKnown is false when Err says why not.
	Share      float64
	ShareKnown bool
	// Masters is how many masters Share is the largest of.
	Masters int
	// Err says why Share is unknown: "INFO commandstats refused: …", or a master whose
	// commandstats could not be read.
	Err string
}
