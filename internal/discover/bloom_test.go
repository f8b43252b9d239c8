package discover

import (
	"fmt"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// Bloom filters among unclaimed keys: our metadata hashes (known by their layout field) and
// RedisBloom's type get a [[bloom]] entry; our sub-filters' bitmaps are told apart by name, with
// no entry of their own; hashes whose layout field says something else are no filters.
func TestBloomGroups(t *testing.T) {
	g := New(Options{Location: time.UTC})
	now := time.Now()
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprint("seen:user", i), store.BloomPartKey(fmt.Sprint("seen:user", i), 0),
			fmt.Sprint("rb:visitor", i), fmt.Sprint("card:user", i))
	}
	for _, n := range g.Add(names) {
		s := Sample{Name: n, TTL: -1, Now: now, Bytes: 100}
		switch n[:2] {
		case "se":
			s.Type, s.Len, s.Field = "hash", 16, layoutRead(t, n, store.BloomLayout)
		case "{s":
			s.Type, s.Len, s.Value = "string", 1200, "\x00\x10\x80"
		case "rb":
			s.Type = "MBbloom--"
		case "ca":
			s.Type, s.Len, s.Field = "hash", 3, layoutRead(t, n, "grid")
		}
		g.AddSample(s)
	}
	got := map[string]Group{}
	for _, gr := range g.Result().Groups {
		got[gr.Pattern] = gr
	}
	for _, p := range []string{"seen:<user>", "rb:<visitor>"} {
		if gr := got[p]; gr.Kind != KindBloom || gr.Confidence != High || gr.Entry == nil || gr.Entry.Table != "bloom" || gr.Entry.Pattern != p {
			t.Errorf("%s: %+v, want a [[bloom]] entry of high confidence", p, gr)
		}
	}
	parts := false
	for p, gr := range got {
		if gr.Kind == KindBloom && gr.Entry == nil && gr.Keys == 8 {
			parts = true
		}
		if p == "card:<user>" && gr.Kind == KindBloom {
			t.Errorf("hashes whose layout field is no filter's: %+v", gr)
		}
	}
	if !parts {
		t.Errorf("the sub-filters' group is not told apart: %+v", got)
	}
}

// layoutRead is the field a sweep would read of hash name: value when HashField names the
// metadata's layout field.
func layoutRead(t *testing.T, name, value string) string {
	t.Helper()
	if HashField(name) != store.BloomLayoutField {
		t.Fatalf("the sweep reads field %q of hash %s, not the layout", HashField(name), name)
	}
	return value
}
