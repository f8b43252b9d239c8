package watch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// ReplicaSet is where a Watcher finds the replicas its sweeps read from: the candidates, best
// first, and a read-only client of one.
type ReplicaSet interface {
	Candidates(ctx context.Context) ([]string, error)
	Client(addr string) redis.UniversalClient
}

// MaxReplicaLag is how far behind the primary a replica may fall before the sweeps leave it:
// the age of the oldest primary offset, read at a Poll, that the replica has not reached.
const MaxReplicaLag = 10 * time.Second

// replicaCheck bounds one replica's check: a replica that does not answer in a second is down
// for this Poll, which then reads elsewhere rather than wait.
const replicaCheck = time.Second

// offsetAt is the primary's replication offset as a Poll read it.
type offsetAt struct {
	at     time.Time
	offset int64
}

// replicaReads is the replica the sweep, its last step's reads and the live reads go to. The
// primary keeps the writes, INFO, the commandstats and the clock.
type replicaReads struct {
	set     ReplicaSet
	addr    string // the replica read from; "" while the reads are on the primary
	client  redis.UniversalClient
	lag     time.Duration
	left    map[string]string // a replica left, and why, at the last check
	offsets []offsetAt        // the primary's offsets of the last Polls, oldest first
}

// ReadFrom has the Watcher's sweeps and live reads go to a replica of set, checked at every
// Poll. Call it before the first Poll.
func (w *Watcher) ReadFrom(set ReplicaSet) {
	w.replica = &replicaReads{set: set, left: map[string]string{}}
	w.opt.Replica = true
}

// reader is the client the sweep and the live reads use: the replica's, or the primary's.
func (w *Watcher) reader() redis.UniversalClient {
	if r := w.replica; r != nil && r.client != nil {
		return r.client
	}
	return w.rdb
}

// chooseReplica checks the replica read from and, when it is down, out of sync or promoted,
// moves the reads to another one or to the primary. A move starts the sweep again: its
// cursors belong to the node they came from.
func (w *Watcher) chooseReplica(ctx context.Context) {
	if w.replica != nil && w.replica.choose(ctx, w.rdb) {
		w.restart = true
	}
}

// choose keeps the replica read from while it passes its checks, else picks the first
// candidate that does, or none (the reads go to primary). It reports whether the node read
// from changed.
func (r *replicaReads) choose(ctx context.Context, primary redis.Cmdable) bool {
	now := time.Now()
	if off, err := store.PrimaryOffset(ctx, primary); err == nil {
		r.offsets = append(r.offsets, offsetAt{now, off})
	}
	for len(r.offsets) > 1 && now.Sub(r.offsets[1].at) > 3*MaxReplicaLag {
		r.offsets = r.offsets[1:]
	}
	was := r.addr
	if r.client != nil {
		why := r.check(ctx, r.client, now)
		if why == "" {
			return false // the replicas left when this one was chosen stay named
		}
		clear(r.left)
		r.left[r.addr] = why
		r.drop()
	} else {
		clear(r.left)
	}
	addrs, err := r.set.Candidates(ctx)
	if err != nil {
		r.left["replicas"] = oneLine(err.Error())
	}
	for _, addr := range addrs {
		if _, bad := r.left[addr]; bad {
			continue
		}
		c := r.set.Client(addr)
		if why := r.check(ctx, c, now); why != "" {
			r.left[addr] = why
			_ = c.Close()
			continue
		}
		r.addr, r.client = addr, c
		break
	}
	return r.addr != was
}

// PickReplica is, for a single sweep (snapshot), the first replica of set that passes the
// checks a Watcher makes at every Poll, with what was found; the primary when none does.
// The caller closes a client that is not primary.
func PickReplica(ctx context.Context, primary redis.UniversalClient, set ReplicaSet) (redis.UniversalClient, *snapshot.ReadState) {
	r := &replicaReads{set: set, left: map[string]string{}}
	r.choose(ctx, primary)
	if r.client == nil {
		return primary, r.state()
	}
	return r.client, r.state()
}

// drop closes the replica's client; the reads go to the primary until another is chosen.
func (r *replicaReads) drop() {
	if r.client != nil {
		_ = r.client.Close()
	}
	r.addr, r.client, r.lag = "", nil, 0
}

// check says in a word or two why the replica at c may not be read from, or "": down,
// promoted, its link down (its data would be stale), or more than MaxReplicaLag behind.
func (r *replicaReads) check(ctx context.Context, c redis.Cmdable, now time.Time) string {
	ctx, cancel := context.WithTimeout(ctx, replicaCheck)
	defer cancel()
	st, err := store.ReadReplicaState(ctx, c)
	switch {
	case err != nil:
		return "down"
	case st.Role == "master":
		return "promoted"
	case st.Unknowns == "" && !st.LinkUp:
		return "link down" // its data would be stale
	}
	r.lag = 0
	for _, o := range r.offsets {
		if st.Offset < o.offset {
			r.lag = now.Sub(o.at)
			break
		}
	}
	if r.lag > MaxReplicaLag {
		return fmt.Sprintf("%s behind", r.lag.Truncate(time.Second))
	}
	return ""
}

// state is what the header says of the reads: the replica read from, and the replicas left.
func (r *replicaReads) state() *snapshot.ReadState {
	if r == nil {
		return nil
	}
	rs := &snapshot.ReadState{Replica: r.addr, Lag: r.lag}
	for addr, why := range r.left {
		rs.Left = append(rs.Left, addr+" "+why)
	}
	slices.Sort(rs.Left)
	return rs
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
