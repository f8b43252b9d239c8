package format

import (
	"math"
	"time"
)

// Plural is the noun that agrees with n: one when n is 1, many otherwise ("0 families").
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n with thousands separators and the noun that agrees with it: "1 family",
// "1,204 keys".
func Count[N ~int | ~int64](n N, one, many string) string {
	return Commas(int64(n)) + " " + Plural(n, one, many)
}

// Pending fills a cell whose figure is still being measured, where Measuring would not fit. It is
// never Unknown ("?"), which says a figure could not be read.
const Pending = "measuring"

// Measuring is a figure still being measured, such as a rate that needs its reads to span needSec
// and has spanSec so far: "measuring, 8s to go", or Pending once only the next read is awaited.
func Measuring(spanSec, needSec float64) string {
	left := math.Ceil(needSec - spanSec)
	if left < 1 || math.IsNaN(left) {
		return Pending
	}
	return Pending + ", " + Age(time.Duration(left)*time.Second) + " to go"
}
