package store

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What a writer that gives up can still say truthfully.
//
// A call whose answer never came (a lost reply, a timeout, a connection cut) may have been applied
// all the same: Redis ran it and the answer was lost on the way back. Its sequence record knows:
// the record holds the last number applied in its lane and slot, so a call whose number the
// record has reached was applied, once, and one past it was not. CheckRecords asks the records;
// Held counts what is left.

// RecordCheck is what the sequence records said of the calls whose answer never came.
type RecordCheck struct {
	Applied      FlushResult // the calls applied after all: their events, keys and calls (Failed is 0)
	AppliedPairs int         // the key pairs of those calls
	NotApplied   int         // key pairs in calls the records show were not applied
	Unknown      int         // key pairs in calls whose record could not be read
	Err          error       // why a record could not be read, when one could not
}

// CheckRecords reads the sequence record of every call the writer holds unconfirmed. The calls
// the records show applied are confirmed and leave the writer; the others stay, to be sent
// again by the next Flush. It reads with one pipeline of GETs, bounded by ctx.
func (w *Writer) CheckRecords(ctx context.Context) RecordCheck {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	var rc RecordCheck
	if len(w.unsent) == 0 {
		return rc
	}
	records := map[laneSlot]*redis.StringCmd{}
	pipe := w.s.rdb.Pipeline()
	for _, c := range w.unsent {
		ls := laneSlot{c.lane, c.slot}
		if records[ls] == nil {
			records[ls] = pipe.Get(ctx, c.keys[0])
		}
	}
	_, _ = pipe.Exec(ctx) // each GET carries its own error
	kept := w.unsent[:0]
	pairs := 0
	for _, c := range w.unsent {
		ls := laneSlot{c.lane, c.slot}
		last, err := records[ls].Int64()
		switch {
		case errors.Is(err, redis.Nil): // no record: nothing of this sequence is in Redis
			last, err = 0, nil
		case err != nil:
			rc.Unknown += len(c.units)
			rc.Err = err
			kept, pairs = append(kept, c), pairs+len(c.units)
			continue
		}
		if c.seq > last {
			rc.NotApplied += len(c.units)
			kept, pairs = append(kept, c), pairs+len(c.units)
			continue
		}
		w.confirmed[ls] = max(w.confirmed[ls], c.seq)
		rc.Applied.Calls++
		rc.Applied.Keys += len(c.counters())
		rc.AppliedPairs += len(c.units)
		for _, u := range c.units {
			rc.Applied.Events += u.events
		}
	}
	clear(w.unsent[len(kept):])
	w.unsent = kept
	w.mu.Lock()
	w.unsentPairs = pairs
	w.mu.Unlock()
	return rc
}

// Held counts the key pairs the writer holds: those in calls sent whose answer has not confirmed
// them (sent), and those waiting to be sent (waiting).
func (w *Writer) Held() (sent, waiting int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unsentPairs, len(w.pending)
}

// Blame turns the first permanent error in a flush's err into a *CommandError. It names the command
// that was refused and the key it was about; user is the Redis user the writer runs as. It returns
// nil when no part of err is permanent.
//
// A key Redis refused inside the counter script names INCRBY (or PEXPIREAT) and that key. A refused
// script load names SCRIPT LOAD, a refused clock read TIME. Any other refusal names EVALSHA and the
// first key of the first call not confirmed. A NOPERM that names its command gives that command
// instead.
func (w *Writer) Blame(err error, user string) *CommandError {
	part := firstPermanent(err)
	if part == nil {
		return nil
	}
	ce := &CommandError{Command: "EVALSHA", User: user, Err: Reply(part)}
	var ke *KeyError
	switch msg := part.Error(); {
	case errors.As(part, &ke):
		ce.Command, ce.Key, ce.Err = "INCRBY", ke.Key, ke.Err
		if strings.HasPrefix(ke.Err.Error(), "PEXPIREAT") {
			ce.Command = "PEXPIREAT"
		}
	case strings.Contains(msg, "load scripts"):
		ce.Command = "SCRIPT LOAD"
	case strings.Contains(msg, "read server clock"):
		ce.Command = "TIME"
	default:
		w.flushMu.Lock()
		if len(w.unsent) > 0 {
			ce.Key = w.unsent[0].counters()[0]
		}
		w.flushMu.Unlock()
	}
	if r := Refused(part); r != "" && r != "key" && r != "channel" && r != "command" {
		ce.Command = strings.ToUpper(strings.ReplaceAll(r, "|", " "))
	}
	return ce
}

// firstPermanent is the first error joined in err that is permanent, or nil.
func firstPermanent(err error) error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if p := firstPermanent(e); p != nil {
				return p
			}
		}
		return nil
	}
	if Permanent(err) {
		return err
	}
	return nil
}
