package discover

import (
	"fmt"

	"github.com/hourglass-dev/hourglass/store"
)

// Bloom filters among the keys no entry claims: hourglass's own by their metadata hash, whose
// layout field (store.BloomLayoutField) reads store.BloomLayout, the deciding evidence; their
// sub-filters' bitmaps by their names (store.BloomPartOf); RedisBloom's by their type.

// bloomModuleType is the type RedisBloom's filters have.
const bloomModuleType = "MBbloom--"

// inferBloom decides a group of Bloom filters' keys, of main type t: a [[bloom]] entry for their
// metadata hashes or RedisBloom's filters; none for their sub-filters' bitmaps, which the entry
// of their filters claims. It reports whether the group is one.
func inferBloom(gr *Group, sh *shape, t string) bool {
	e := &sh.ev
	n := 0.9 * float64(e.present())
	l := keyLayout(sh)
	switch {
	case t == "hash" && float64(e.bloomMeta) >= n:
		gr.Evidence = append(gr.Evidence, fmt.Sprintf("hashes whose %s field reads %q: hourglass's Bloom filters' metadata (their sub-filters' bitmaps are named {<filter>}:<i>)",
			store.BloomLayoutField, store.BloomLayout))
	case t == bloomModuleType:
		gr.Evidence = append(gr.Evidence, "RedisBloom's filters (type "+bloomModuleType+"), read with BF.INFO")
	case t == "string" && float64(e.bloomParts) >= n:
		gr.Kind, gr.Confidence = KindBloom, Medium
		gr.Evidence = append(gr.Evidence, "strings named as hourglass's Bloom filters' sub-filters ({<filter>}:<i>): the [[bloom]] entry of their filters claims them, so none is proposed here")
		return true
	default:
		return false
	}
	gr.Pattern = l.text
	gr.Kind, gr.Confidence = KindBloom, High
	gr.Entry = &Entry{Table: "bloom", Pattern: l.text}
	return true
}
