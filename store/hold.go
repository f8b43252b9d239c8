package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a writer holds through a failover.
//
// Replication is asynchronous: a call the old primary confirmed may not have reached the
// replica Sentinel promotes. During a SENTINEL FAILOVER the old primary even goes on taking
// writes until the Sentinels tell the clients (+switch-master): those are lost when it becomes a
// replica. So a writer through Sentinel holds every call it saw confirmed for HoldFor. When its
// connections reach another node (PrimaryTrack), it reads that node's sequence records before
// anything else: a held call past the record is sent again, unchanged, and applies there once;
// one the record has reached is there already. So nothing the old primary confirmed is lost,
// and nothing counts twice.

// DefaultHoldFor is how long a writer through Sentinel holds a confirmed call: well past the
// seconds a failover leaves the old primary taking writes.
const DefaultHoldFor = 30 * time.Second

// heldCall is a confirmed call and when it was confirmed.
type heldCall struct {
	c  *call
	at time.Time
}

// floor is the confirmed number a call of ls passes its script: the last one no failover can
// take back. While calls are held it is the one before the first held, so a new primary that
// lacks them answers GAP rather than skip past them before reconcile sends them again.
func (w *Writer) floor(ls laneSlot) int64 {
	if hs := w.held[ls]; len(hs) > 0 {
		return hs[0].c.seq - 1
	}
	return w.confirmed[ls]
}

// hold keeps confirmed calls for a failover that could lose them. flushMu is held, and the
// lock send's lanes share.
func (w *Writer) hold(calls []*call, now time.Time) {
	if w.track == nil {
		return
	}
	for _, c := range calls {
		ls := laneSlot{c.lane, c.slot}
		w.held[ls] = append(w.held[ls], heldCall{c: c, at: now})
	}
}

// prune lets go the calls held past HoldFor, once a flush has reached the same primary since
// they were confirmed: the primary they were confirmed on is still the one written to.
func (w *Writer) prune(now time.Time) {
	if w.track == nil {
		return
	}
	if _, changes, _ := w.track.Primary(); changes != w.heldSeen {
		return
	}
	for ls, hs := range w.held {
		i := 0
		for i < len(hs) && now.Sub(hs[i].at) > w.holdFor {
			i++
		}
		if i == len(hs) {
			delete(w.held, ls)
			continue
		}
		w.held[ls] = hs[i:]
	}
}

// reconcile, when the writer's connections have reached another primary since it last looked,
// reads that primary's sequence records and puts the held calls it lacks before the unsent
// ones, to be sent again. An error says the records could not be read: the next flush tries
// again. Calls the new primary lacks that were let go already are lost; w.lost says so, and the
// flush reports it.
func (w *Writer) reconcile(ctx context.Context) error {
	if w.track == nil {
		return nil
	}
	_, changes, _ := w.track.Primary()
	if changes == w.heldSeen {
		return nil
	}
	records := map[laneSlot]*redis.StringCmd{}
	pipe := w.s.rdb.Pipeline()
	for ls, hs := range w.held {
		records[ls] = pipe.Get(ctx, hs[0].c.keys[0])
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("store: flush: read the sequence records after a failover: %w", err)
	}
	var resend []*call
	for ls, hs := range w.held {
		last, err := records[ls].Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("store: flush: read the sequence records after a failover: %w", err)
		}
		i := 0
		for i < len(hs) && hs[i].c.seq <= last {
			i++
		}
		kept := hs[:i]
		if i < len(hs) && hs[i].c.seq > last+1 {
			w.lost = fmt.Errorf("store: flush: the new primary lacks calls %d to %d of a sequence, confirmed before the writer held them: their events are lost",
				last+1, hs[i].c.seq-1)
			last, kept = hs[i].c.seq-1, nil
		}
		w.confirmed[ls] = last // what the new primary has: the floor its script counts from
		for _, h := range hs[i:] {
			h.c.resent = true
			resend = append(resend, h.c)
		}
		w.held[ls] = kept
	}
	w.unsent = append(resend, w.unsent...)
	w.heldSeen = changes
	return nil
}
