package store

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// ScoreUnit says how a sorted set's scores encode due times. Writers differ: Java's
// System.currentTimeMillis() scores in milliseconds; Python's time.time(), Sidekiq, RQ and asynq
// in seconds (Python and Sidekiq with a fraction); some in microseconds; BullMQ's delayed set in
// milliseconds × 4096 plus a counter.
type ScoreUnit uint8

// Score units. The zero value is milliseconds.
const (
	Milliseconds ScoreUnit = iota
	Seconds
	Microseconds
	BullMQScore // due milliseconds × 4096 + a 12-bit counter
	// AutoUnit decides the unit of each queue from its scores against the server's clock: the
	// one unit in which they fall within PlausibleSpan of now.
	AutoUnit
)

// PlausibleSpan is how far from now a due time may lie before its score is taken for another
// unit: no queue schedules ten years ahead, and none keeps a task ten years overdue.
const PlausibleSpan = 10 * 365 * 24 * time.Hour

var unitNames = [...]string{Milliseconds: "ms", Seconds: "s", Microseconds: "us", BullMQScore: "bullmq", AutoUnit: "auto"}

// String is the unit's name in the config: ms, s, us, bullmq or auto.
func (u ScoreUnit) String() string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return fmt.Sprintf("unit(%d)", uint8(u))
}

// ParseScoreUnit reads a unit's config name.
func ParseScoreUnit(s string) (ScoreUnit, error) {
	for u, name := range unitNames {
		if name == s {
			return ScoreUnit(u), nil
		}
	}
	return 0, fmt.Errorf("want \"ms\", \"s\", \"us\", \"bullmq\" or \"auto\" (how the scores encode due times), got %q", s)
}

// WriteUnit is the unit hourglass's own writer scores in: auto has no unit of its own, and a new
// queue gets milliseconds.
func (u ScoreUnit) WriteUnit() ScoreUnit {
	if u == AutoUnit {
		return Milliseconds
	}
	return u
}

// Score is the score hourglass writes for a task due at t.
func (u ScoreUnit) Score(t time.Time) float64 {
	switch u.WriteUnit() {
	case Seconds:
		return float64(t.Unix())
	case Microseconds:
		return float64(t.UnixMicro())
	case BullMQScore:
		return float64(t.UnixMilli() * 4096)
	}
	return float64(t.UnixMilli())
}

// Bound is the largest score of a task due at or before t, as a ZRANGEBYSCORE/ZCOUNT bound:
// exact to the microsecond for fractional scores, and past every counter of t's millisecond for
// BullMQ.
func (u ScoreUnit) Bound(t time.Time) string {
	us := t.UnixMicro()
	switch u {
	case Seconds:
		return strconv.FormatFloat(float64(us)/1e6, 'f', 6, 64)
	case Microseconds:
		return strconv.FormatInt(us, 10)
	case BullMQScore:
		return strconv.FormatInt(floorDiv(us, 1000)*4096+4095, 10)
	}
	return strconv.FormatFloat(float64(us)/1e3, 'f', 3, 64)
}

// Time is the due time a score encodes.
func (u ScoreUnit) Time(score float64) time.Time {
	switch u {
	case Seconds:
		return time.UnixMicro(int64(math.Round(score * 1e6)))
	case Microseconds:
		return time.UnixMicro(int64(score))
	case BullMQScore:
		return time.UnixMilli(floorDiv(int64(score), 4096))
	}
	return time.UnixMicro(int64(math.Round(score * 1e3)))
}

// Plausible reports whether score, read in u, is a due time within PlausibleSpan of now.
func (u ScoreUnit) Plausible(score float64, now time.Time) bool {
	if math.IsNaN(score) || math.IsInf(score, 0) || u == AutoUnit {
		return false
	}
	limit := map[ScoreUnit]float64{Seconds: 1e11, Milliseconds: 1e14, Microseconds: 1e17, BullMQScore: 1e18}[u]
	if math.Abs(score) > limit { // past the range time.Time converts without overflow
		return false
	}
	d := u.Time(score).Sub(now)
	return d < PlausibleSpan && d > -PlausibleSpan
}

// GuessUnit returns the unit in which score is a plausible due time at now, if there is one: the
// units' plausible ranges do not overlap (seconds near 1.7e9, ms near 1.7e12, µs near 1.7e15,
// BullMQ's near 7e15).
func GuessUnit(score float64, now time.Time) (ScoreUnit, bool) {
	for _, u := range []ScoreUnit{Seconds, Milliseconds, Microseconds, BullMQScore} {
		if u.Plausible(score, now) {
			return u, true
		}
	}
	return AutoUnit, false
}

// floorDiv divides rounding toward minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
