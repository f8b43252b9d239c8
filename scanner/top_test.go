package scanner

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopSlotKeepsTheLargest offers random values (with ties) to a top list of k and checks it
// holds the k largest, largest first, whatever k.
func TestTopSlotKeepsTheLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 3, 10} {
		var top []int64
		var all []int64
		for range 500 {
			v := r.Int64N(100)
			all = append(all, v)
			var i int
			if top, i = topSlot(top, v, k, func(x int64) int64 { return x }); i >= 0 {
				top[i] = v
			}
		}
		slices.Sort(all)
		slices.Reverse(all)
		if want := all[:k]; !slices.Equal(top, want) {
			t.Errorf("k=%d: top %v, want %v", k, top, want)
		}
	}
}
