package scanner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// RedisBloom's filters (type MBbloom--) are read through the module: BF.INFO gives the first
// sub-filter's capacity, the memory, the sub-filters, the items inserted and the expansion, not
// the bits set nor the error rate. BF.DEBUG, when it answers, gives each sub-filter's bits,
// hashes, items and error ratio: the first's ratio is the rate given to BF.RESERVE times 0.5
// (src/sb.c's ERROR_TIGHTENING_RATIO) on a scaling filter, the rate itself on a NONSCALING one,
// and the false-positive rate is estimated from each sub-filter's items, 1 − e^(−k·n/m) of its
// bits being set. Replies are parsed as RESP2 (a flat array) or RESP3 (a map).

// bfInfo is BF.INFO's reply.
type bfInfo struct {
	capacity, size, filters, items int64
	expansion                      int64 // 0: NONSCALING (the reply's nil)
}

// bfPart is one sub-filter of BF.DEBUG's reply.
type bfPart struct {
	bits, hashes, items, capacity int64
	ratio                         float64
}

// parseBFInfo reads BF.INFO's reply.
func parseBFInfo(reply any) (bfInfo, error) {
	fields := map[string]any{}
	switch v := reply.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			name, _ := v[i].(string)
			fields[name] = v[i+1]
		}
	case map[any]any:
		for k, val := range v {
			name, _ := k.(string)
			fields[name] = val
		}
	default:
		return bfInfo{}, fmt.Errorf("BF.INFO: a reply of %T, not an array or map", reply)
	}
	var info bfInfo
	for name, dst := range map[string]*int64{"Capacity": &info.capacity, "Size": &info.size,
		"Number of filters": &info.filters, "Number of items inserted": &info.items, "Expansion rate": &info.expansion} {
		val, present := fields[name]
		if !present {
			return bfInfo{}, fmt.Errorf("BF.INFO: no %q in the reply", name)
		}
		if val == nil && name == "Expansion rate" { // NONSCALING
			continue
		}
		n, ok := val.(int64)
		if !ok || n < 0 {
			return bfInfo{}, fmt.Errorf("BF.INFO: %q is %v, not a count", name, val)
		}
		*dst = n
	}
	return info, nil
}

// parseBFDebug reads BF.DEBUG's reply: "size:N", then one line per sub-filter.
func parseBFDebug(reply any) ([]bfPart, error) {
	lines, ok := reply.([]any)
	if !ok || len(lines) < 2 {
		return nil, fmt.Errorf("BF.DEBUG: a reply of %T, not an array of lines", reply)
	}
	parts := make([]bfPart, 0, len(lines)-1)
	for _, l := range lines[1:] {
		s, _ := l.(string)
		f := map[string]string{}
		for _, kv := range strings.Fields(s) {
			if k, v, ok := strings.Cut(kv, ":"); ok {
				f[k] = v
			}
		}
		var p bfPart
		var errs []error
		num := func(k string) int64 {
			n, err := strconv.ParseInt(f[k], 10, 64)
			if err != nil || n < 0 {
				errs = append(errs, err)
			}
			return n
		}
		p.bits, p.hashes, p.items, p.capacity = num("bits"), num("hashes"), num("size"), num("capacity")
		r, err := strconv.ParseFloat(f["ratio"], 64)
		if err != nil || len(errs) > 0 || p.bits == 0 || p.hashes == 0 || !(r > 0 && r < 1) {
			return nil, fmt.Errorf("BF.DEBUG: a sub-filter's line %q does not read", s)
		}
		p.ratio = r
		parts = append(parts, p)
	}
	return parts, nil
}

// moduleFigures fills what BF.INFO gives, and what BF.DEBUG's parts give when it answered.
// BF.INFO's Capacity is its sub-filters' together: the first's is capacity/(1+e+…+e^(n−1)), each
// sub-filter e times the last (src/sb.c), which BF.DEBUG gives as it is.
func moduleFigures(bf *snapshot.BloomFilter, info bfInfo, parts []bfPart) {
	subs, expansion, capacity := int(info.filters), int(info.expansion), info.capacity
	if sum, grow := int64(0), int64(1); info.expansion > 0 && info.filters > 1 {
		for i := int64(0); i < info.filters && grow <= info.capacity; i++ {
			sum, grow = sum+grow, grow*info.expansion
		}
		capacity = info.capacity / sum
	}
	if len(parts) > 0 {
		capacity = parts[0].capacity
	}
	added, size := info.items, info.size
	bf.SubFilters, bf.Expansion, bf.Capacity, bf.Added, bf.MemoryBytes = &subs, &expansion, &capacity, &added, &size
	if parts == nil {
		bf.Notes = append(bf.Notes, "BF.INFO gives neither the bits set nor the error rate, and BF.DEBUG did not answer: fill, elements, false-positive rate and target unknown")
		return
	}
	target := parts[0].ratio
	if info.expansion > 0 {
		target /= 0.5 // a scaling filter's first sub-filter is at half the rate asked
	}
	bf.TargetRate = &target
	fills, hashes := make([]float64, len(parts)), make([]int, len(parts))
	var set, bits float64
	for i, p := range parts {
		fills[i] = -math.Expm1(-float64(p.hashes) * float64(p.items) / float64(p.bits))
		hashes[i] = int(p.hashes)
		set, bits = set+fills[i]*float64(p.bits), bits+float64(p.bits)
	}
	fp := store.BloomFalsePositive(fills, hashes)
	bf.Fill = &snapshot.BloomFigure{Value: set / bits, Low: set / bits, High: set / bits, From: "items"}
	bf.FalsePositive = &snapshot.BloomFigure{Value: fp, Low: fp, High: fp, From: "items"}
	bf.OverTarget = fp > target
	bf.Notes = append(bf.Notes, "fill and false-positive rate expected from BF.DEBUG's items per sub-filter, not read from its bits; elements not estimated: Added is the module's count")
}

// readModuleBloom reads one of RedisBloom's filters. nil when BF.INFO is refused (counted in
// un) or the filter is gone.
func (s *Sweep) readModuleBloom(ctx context.Context, f bloomFound, un *bloomUnread) *snapshot.BloomFilter {
	var reply any
	if err := s.call(ctx, 1, func() (err error) { reply, err = s.rdb.Do(ctx, "BF.INFO", f.key).Result(); return err }); err != nil {
		if !strings.Contains(err.Error(), "not found") { // gone since its page
			un.refused("BF.INFO", f.key, err)
		}
		return nil
	}
	info, err := parseBFInfo(reply)
	if err != nil {
		un.refused("BF.INFO", f.key, err)
		return nil
	}
	bf := &snapshot.BloomFilter{Key: format.Escape(f.key), Raw: f.key, Layout: "redisbloom", TTLMS: ttlMS(f.ttl)}
	var parts []bfPart
	if err := s.call(ctx, 1, func() (err error) { reply, err = s.rdb.Do(ctx, "BF.DEBUG", f.key).Result(); return err }); err != nil {
		bf.Notes = append(bf.Notes, "BF.DEBUG "+format.Escape(f.key)+": "+strings.TrimSpace(err.Error()))
	} else if parts, err = parseBFDebug(reply); err != nil {
		bf.Notes = append(bf.Notes, err.Error())
	}
	moduleFigures(bf, info, parts)
	return bf
}
