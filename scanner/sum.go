package scanner

import (
	"math"
	"math/bits"
)

// wide is a 128-bit two's complement integer: the sweep adds values up in it, so a total is
// exact however many keys hold values near the int64 ends, and only the figure a Snapshot
// reports is clamped to int64 (and then marked saturated).
type wide struct {
	hi int64
	lo uint64
}

func wideOf(n int64) wide { return wide{hi: n >> 63, lo: uint64(n)} }

func (a wide) add(b wide) wide {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	return wide{hi: a.hi + b.hi + int64(carry), lo: lo}
}

func (a *wide) addInt(n int64) { *a = a.add(wideOf(n)) }

func (a wide) neg() wide {
	lo, carry := bits.Add64(^a.lo, 1, 0)
	return wide{hi: ^a.hi + int64(carry), lo: lo}
}

func (a wide) sub(b wide) wide { return a.add(b.neg()) }

func (a wide) abs() wide {
	if a.hi < 0 {
		return a.neg()
	}
	return a
}

// int64 is a clamped to the int64 range; saturated says it did not fit.
func (a wide) int64() (n int64, saturated bool) {
	switch {
	case a.hi == 0 && a.lo <= math.MaxInt64, a.hi == -1 && a.lo > math.MaxInt64:
		return int64(a.lo), false
	case a.hi < 0:
		return math.MinInt64, true
	default:
		return math.MaxInt64, true
	}
}

// float is a as the nearest float64.
func (a wide) float() float64 {
	if a.hi < 0 {
		return -a.neg().float()
	}
	return float64(a.hi)*(1<<64) + float64(a.lo)
}

// Sum adds a Snapshot's figures, some of which may be saturated (a bound at an int64 end: at
// least math.MaxInt64, or at most math.MinInt64), the way a front end totals them across
// families. The zero value is an empty sum.
type Sum struct {
	v        wide
	up, down bool // some figure added was a bound upwards, downwards
}

// Add adds n; saturated says n is a bound (upwards when positive, downwards when negative).
func (s *Sum) Add(n int64, saturated bool) {
	s.v.addInt(n)
	switch {
	case saturated && n > 0:
		s.up = true
	case saturated && n < 0:
		s.down = true
	}
}

// Value is the sum as a figure: saturated when it sits at an int64 end because the true sum lies
// beyond it. known is false when the figures added cannot bound it from one side (a bound
// upwards and one downwards, or a bound whose side the exact rest moved off the int64 end).
func (s Sum) Value() (n int64, saturated, known bool) {
	n, saturated = s.v.int64()
	switch {
	case s.up && s.down:
		return 0, false, false
	case s.up:
		return n, true, n == math.MaxInt64
	case s.down:
		return n, true, n == math.MinInt64
	}
	return n, saturated, true
}

// greater reports whether a > b.
func (a wide) greater(b wide) bool {
	if a.hi != b.hi {
		return a.hi > b.hi
	}
	return a.lo > b.lo
}
