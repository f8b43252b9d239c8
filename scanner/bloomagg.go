package scanner

import (
	"sort"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// A [[bloom]] entry's keys: its pattern's keys are filters (our metadata hash, or RedisBloom's
// type MBbloom--) or counted as unreadable under their type, and the sub-filters' bitmaps of a
// filter the pattern matches are claimed with it, even where the pattern itself does not match
// them ({bf:users}:0 for bf:<name>). The page reads each key's type and TTL; the filters are read
// at the sweep's end (bloomread.go), the first maxBloomFilters of an entry.

// maxBloomFilters bounds the filters of one [[bloom]] entry a sweep reads.
const maxBloomFilters = 200

// Types of the keys a [[bloom]] pattern matches that the sweep reads as filters.
const (
	bloomHash   = "hash"      // ours, if its metadata reads
	bloomModule = "MBbloom--" // RedisBloom's
)

// bloomMatchers claim each [[bloom]] entry's keys: a sub-filter's bitmap first, then the
// pattern's keys.
func bloomMatchers(st Structures) []matcher {
	var out []matcher
	for i, b := range st.Blooms {
		part := func(name string) bool {
			f, _, ok := store.BloomPartOf(name)
			if !ok || b.Exclude.Match(f) {
				return false
			}
			_, ok = b.Pattern.Match(f)
			return ok
		}
		out = append(out, matcher{kindBloomPart, i, kindBloomPart, func(name string) (Key, bool) {
			return Key{Name: name, kind: kindBloomPart, spec: i}, part(name)
		}}, matcher{kindBloom, i, kindBloom, func(name string) (Key, bool) {
			dims, ok := b.Pattern.Match(name)
			if !ok || b.Exclude.Match(name) || part(name) {
				return Key{}, false
			}
			return Key{Name: name, kind: kindBloom, spec: i, Classified: store.Classified{Dims: dims}}, true
		}})
	}
	return out
}

// bloomAgg is one [[bloom]] entry's keys as the pages found them.
type bloomAgg struct {
	filters    []bloomFound // in SCAN's order, at most maxBloomFilters
	seen       map[string]bool
	more       bool
	unreadable map[string]int64 // keys that are no filter, by why
}

// bloomFound is a key to read as a filter: its type and TTL as its page read them.
type bloomFound struct {
	key string
	typ string
	ttl time.Duration
}

// bloomWant is one [[bloom]] entry's filters to read.
type bloomWant struct {
	spec    int
	filters []bloomFound
}

// add folds in a key of the pattern: a filter to read, or one counted under its type.
func (b *bloomAgg) add(k *Key) {
	if k.Gone || k.Value == "none" || b.seen[k.Name] { // gone since SCAN (TYPE answers none), or SCAN returned it twice
		return
	}
	if b.seen == nil {
		b.seen, b.unreadable = map[string]bool{}, map[string]int64{}
	}
	b.seen[k.Name] = true
	if k.Value != bloomHash && k.Value != bloomModule {
		b.unreadable["a "+k.Value+", not a filter's metadata hash or RedisBloom's "+bloomModule]++
		return
	}
	if len(b.filters) >= maxBloomFilters {
		b.more = true
		return
	}
	b.filters = append(b.filters, bloomFound{key: k.Name, typ: k.Value, ttl: k.TTL})
}

func (b *bloomAgg) want(spec int) bloomWant {
	return bloomWant{spec: spec, filters: b.filters}
}

// bloomRead is what the sweep's last step read of one entry's filters, in the want's order; a
// filter not read is left out, counted under why in unreadable.
type bloomRead struct {
	filters    []snapshot.BloomFilter
	unreadable map[string]int64
}

func (r *Reads) bloom(spec int) (bloomRead, bool) {
	if r == nil {
		return bloomRead{}, false
	}
	b, ok := r.blooms[spec]
	return b, ok
}

// bloomStats renders each [[bloom]] entry: its filters as read, sorted by key, and the keys of
// its pattern that are none. Before the sweep's last step has read them, a filter's figures are
// null and its note says so.
func (a *structAgg) bloomStats(reads *Reads) []snapshot.Bloom {
	out := make([]snapshot.Bloom, 0, len(a.specs.Blooms))
	for i, spec := range a.specs.Blooms {
		agg := a.blooms[i]
		b := snapshot.Bloom{Name: spec.Name, Filters: []snapshot.BloomFilter{}, Unreadable: map[string]int64{}, More: agg.more}
		for why, n := range agg.unreadable {
			b.Unreadable[why] += n
		}
		if r, ok := reads.bloom(i); ok {
			b.Filters = append(b.Filters, r.filters...)
			for why, n := range r.unreadable {
				b.Unreadable[why] += n
			}
		} else {
			for _, f := range agg.filters {
				b.Filters = append(b.Filters, snapshot.BloomFilter{Key: format.Escape(f.key), Raw: f.key, Layout: bloomLayout(f.typ),
					TTLMS: ttlMS(f.ttl), Notes: []string{"not read yet: its bits are read at the sweep's end"}})
			}
		}
		sort.Slice(b.Filters, func(x, y int) bool { return b.Filters[x].Raw < b.Filters[y].Raw })
		out = append(out, b)
	}
	return out
}

// bloomLayout names a filter's layout by its key's type.
func bloomLayout(typ string) string {
	if strings.EqualFold(typ, bloomModule) {
		return "redisbloom"
	}
	return "hourglass"
}
