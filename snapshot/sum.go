package snapshot

import (
	"math"
	"math/bits"
)

// Int128 is a 128-bit two's complement integer. The sweep adds values up in it, so a total is exact
// however many keys hold values near the int64 ends. Only the figure a Snapshot reports is clamped
// to int64, and then marked saturated.
type Int128 struct {
	hi int64
	lo uint64
}

// Int128Of is n as an Int128.
func Int128Of(n int64) Int128 { return Int128{hi: n >> 63, lo: uint64(n)} }

// Add is a + b.
func (a Int128) Add(b Int128) Int128 {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	return Int128{hi: a.hi + b.hi + int64(carry), lo: lo}
}

// AddInt adds n to a.
func (a *Int128) AddInt(n int64) { *a = a.Add(Int128Of(n)) }

// Neg is -a.
func (a Int128) Neg() Int128 {
	lo, carry := bits.Add64(^a.lo, 1, 0)
	return Int128{hi: ^a.hi + int64(carry), lo: lo}
}

// Sub is a - b.
func (a Int128) Sub(b Int128) Int128 { return a.Add(b.Neg()) }

// Abs is |a|.
func (a Int128) Abs() Int128 {
	if a.hi < 0 {
		return a.Neg()
	}
	return a
}

// Int64 is a clamped to the int64 range; saturated says it did not fit.
func (a Int128) Int64() (n int64, saturated bool) {
	switch {
	case a.hi == 0 && a.lo <= math.MaxInt64, a.hi == -1 && a.lo > math.MaxInt64:
		return int64(a.lo), false
	case a.hi < 0:
		return math.MinInt64, true
	default:
		return math.MaxInt64, true
	}
}

// Float is a as the nearest float64.
func (a Int128) Float() float64 {
	if a.hi < 0 {
		return -a.Neg().Float()
	}
	return float64(a.hi)*(1<<64) + float64(a.lo)
}

// Sum adds a Snapshot's figures, some of which may be saturated (a bound at an int64 end: at
// least math.MaxInt64, or at most math.MinInt64), the way a front end totals them across
// families. The zero value is an empty sum.
type Sum struct {
	v        Int128
	up, down bool // some figure added was a bound upwards, downwards
}

// Add adds n; saturated says n is a bound (upwards when positive, downwards when negative).
func (s *Sum) Add(n int64, saturated bool) {
	s.v.AddInt(n)
	switch {
	case saturated && n > 0:
		s.up = true
	case saturated && n < 0:
		s.down = true
	}
}

// Value is the sum as a figure. It is saturated when it sits at an int64 end because the true sum
// lies beyond it. It is not known (known false) when the figures added cannot bound it from one
// side: a bound upwards and one downwards, or a bound whose side the exact rest moved off the int64
// end.
func (s Sum) Value() (n int64, saturated, known bool) {
	n, saturated = s.v.Int64()
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

// Greater reports whether a > b.
func (a Int128) Greater(b Int128) bool {
	if a.hi != b.hi {
		return a.hi > b.hi
	}
	return a.lo > b.lo
}
