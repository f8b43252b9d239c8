package discover

import (
	"maps"
	"sort"
)

// Ids can read as dates: among users 20250102, 20350101 and 31250101, the user 20250101 reads as
// 1 January 2025, and its keys would make a skeleton of their own, with a day window. Such a
// shape has a sibling: the same words in a skeleton the same but for numbers as long where it has
// the date, with at least as many keys. A real window's segment has none, since every window
// reads as a date.

// datelikeMoves says which shapes of which skeletons go to which: from skeleton key, to skeleton
// key, and the shape's key in both.
type datelikeMove struct{ from, to, shape string }

// datelike finds the shapes whose time tokens are ids. g.mu is held.
func (g *Groups) datelike() []datelikeMove {
	var out []datelikeMove
	for k, sk := range g.skels {
		for key, sh := range sk.shapes {
			if to := g.numbersOf(k, sk, key, sh); to != "" {
				out = append(out, datelikeMove{from: k, to: to, shape: key})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from+out[i].shape < out[j].from+out[j].shape })
	return out
}

// numbersOf returns the key of the skeleton where sh's dates are numbers, or "".
func (g *Groups) numbersOf(k string, sk *skeleton, key string, sh *shape) string {
	b := []byte(k)
	for i, c := range sk.classes {
		if !c.timeClass() {
			continue
		}
		b[2*i+1] = classCode[clNum] // a skeleton's key is each segment's separator and class
		if sib := g.skels[string(b)]; sib != nil {
			if o := sib.shapes[key]; o != nil && o.keys >= sh.keys && len(o.slots[i].sample) == len(sh.slots[i].sample) {
				return string(b)
			}
		}
		b[2*i+1] = classCode[c]
	}
	return ""
}

// withMoves is sk (at key k) less the shapes moves take from it and with those they bring it,
// to project; sk and every shape are left as they are. g.mu is held.
func (g *Groups) withMoves(k string, sk *skeleton, moves []datelikeMove) *skeleton {
	var c *skeleton
	view := func() {
		if c == nil {
			cp := *sk
			cp.shapes = maps.Clone(sk.shapes)
			c = &cp
		}
	}
	for _, m := range moves {
		switch k {
		case m.from:
			view()
			if out := c.shapes[m.shape]; out != nil {
				c.keys -= out.keys
				delete(c.shapes, m.shape)
			}
		case m.to:
			view()
			in := g.skels[m.from].shapes[m.shape]
			c.keys += in.keys
			if have := c.shapes[m.shape]; have != nil {
				in = have.clone()
				in.merge(g.skels[m.from].shapes[m.shape])
			}
			c.shapes[m.shape] = in // a shape moved on again by a second date-like segment stays here
		}
	}
	if c == nil {
		return sk
	}
	return c
}
