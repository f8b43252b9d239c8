package infer

import (
	"fmt"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// TestInferredBlooms: with no config, a sweep over filters written by store.Bloom (their
// metadata hashes and sub-filters' bitmaps) and other keys infers a [[bloom]] entry from the
// metadata's layout field, and counts every filter's keys under it, none left unclaimed.
func TestInferredBlooms(t *testing.T) {
	srv := redistest.Start(t)
	rdb, ctx := srv.Client(t), t.Context()
	st := store.New(rdb, store.Options{})
	for i := range 5 {
		b, err := st.Bloom(fmt.Sprint("seen:user", i), store.BloomOptions{Capacity: 20, ErrorRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		for j := range 30 { // past its capacity: a second sub-filter
			if _, err := b.Add(ctx, fmt.Sprint("item", j)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 5 {
		rdb.HSet(ctx, fmt.Sprint("profile:user", i), "name", "x", "layout", "grid") // hashes, not filters
	}
	cfg, err := config.Parse("config.toml", []byte("timezone = \"UTC\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	adopter := New(cfg, false)
	opt := cfg.SweepOptions(true)
	opt.Infer = adopter
	snap, err := scanner.Take(ctx, rdb, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	var blooms []discover.Entry
	for _, e := range snap.Inferred.Entries {
		if e.Table == "bloom" {
			blooms = append(blooms, e)
		}
	}
	if len(blooms) != 1 || blooms[0].Pattern != "seen:<user>" {
		t.Fatalf("inferred %+v, want one [[bloom]] of seen:<user>", snap.Inferred.Entries)
	}
	if len(snap.Blooms) != 1 || len(snap.Blooms[0].Filters) != 5 {
		t.Fatalf("blooms %+v", snap.Blooms)
	}
	for _, f := range snap.Blooms[0].Filters {
		if f.SubFilters == nil || *f.SubFilters != 2 || f.Added == nil || *f.Added < 28 || f.Elements == nil {
			t.Errorf("filter %+v", f)
		}
	}
	profiles := false
	for _, g := range snap.Unclaimed.Groups {
		if g.Kind == discover.KindBloom {
			t.Errorf("a group of the filters' keys left unclaimed: %+v", g)
		}
		profiles = profiles || g.Keys == 5 && g.Examples[0] != "" && g.Kind != discover.KindBloom
	}
	if snap.Unclaimed.Keys != 5 || !profiles {
		t.Errorf("unclaimed %d keys in %+v, want the 5 profile hashes alone", snap.Unclaimed.Keys, snap.Unclaimed.Groups)
	}
}
