package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// latencyHist is one command's LATENCY HISTOGRAM: the calls, and at each bucket's upper edge in
// µs (powers of two, about) how many calls took at most that long. Redis lists only the edges
// where the count grows.
type latencyHist struct {
	calls int64
	edges []int64 // ascending
	cum   []int64 // cumulative calls at edges[i]
}

// at is how many calls took at most e µs.
func (h latencyHist) at(e int64) int64 {
	i, found := slices.BinarySearch(h.edges, e)
	if found {
		return h.cum[i]
	}
	if i == 0 {
		return 0
	}
	return h.cum[i-1]
}

// readLatencyHist reads every command's LATENCY HISTOGRAM (Redis 7 and later, with
// latency-tracking on, its default), in either protocol's shape.
func readLatencyHist(ctx context.Context, rdb *redis.Client) (map[string]latencyHist, error) {
	v, err := rdb.Do(ctx, "latency", "histogram").Result()
	if err != nil {
		return nil, err
	}
	top, ok := pairs(v)
	if !ok {
		return nil, fmt.Errorf("LATENCY HISTOGRAM answered %T", v)
	}
	hists := map[string]latencyHist{}
	for _, cmd := range top {
		name, _ := cmd[0].(string)
		fields, _ := pairs(cmd[1])
		var h latencyHist
		for _, f := range fields {
			switch f[0] {
			case "calls":
				h.calls, _ = f[1].(int64)
			case "histogram_usec":
				buckets, _ := pairs(f[1])
				for _, b := range buckets {
					e, ok1 := b[0].(int64)
					c, ok2 := b[1].(int64)
					if ok1 && ok2 {
						h.edges, h.cum = append(h.edges, e), append(h.cum, c)
					}
				}
			}
		}
		if !slices.IsSorted(h.edges) { // a map (RESP3) has no order
			idx := make([]int, len(h.edges))
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(a, b int) int { return int(h.edges[a] - h.edges[b]) })
			edges, cum := make([]int64, len(idx)), make([]int64, len(idx))
			for i, j := range idx {
				edges[i], cum[i] = h.edges[j], h.cum[j]
			}
			h.edges, h.cum = edges, cum
		}
		hists[name] = h
	}
	return hists, nil
}

// pairs reads a reply that is a map (RESP3) or a flat array of keys and values (RESP2).
func pairs(v any) ([][2]any, bool) {
	var out [][2]any
	switch v := v.(type) {
	case map[any]any:
		for k, val := range v {
			out = append(out, [2]any{k, val})
		}
	case []any:
		if len(v)%2 != 0 {
			return nil, false
		}
		for i := 0; i < len(v); i += 2 {
			out = append(out, [2]any{v[i], v[i+1]})
		}
	default:
		return nil, false
	}
	return out, true
}

// longestAtMost is the upper edge of the bucket that holds the longest call of names between
// two readings of the histograms: the smallest edge at or under which all their new calls fall.
// Nil when none of names was called.
func longestAtMost(before, after map[string]latencyHist, names []string) *float64 {
	var longest *float64
	for _, name := range names {
		b, a := before[name], after[name]
		total := a.calls - b.calls
		if total <= 0 {
			continue
		}
		for _, e := range a.edges {
			if a.at(e)-b.at(e) >= total {
				if longest == nil || float64(e) > *longest {
					v := float64(e)
					longest = &v
				}
				break
			}
		}
	}
	return longest
}
