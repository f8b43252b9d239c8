package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The keys no entry of the config claims. The groups' series are bounded: only the largest
// maxGroupSeries groups are exported, whatever the keyspace holds.
var (
	descUnclaimedKeys  = prometheus.NewDesc("hourglass_unclaimed_keys", "Keys no entry of the config claims, in the last complete sweep.", nil, nil)
	descUnclaimedBytes = prometheus.NewDesc("hourglass_unclaimed_bytes", "Estimated memory of the keys no entry claims: per group, its sampled keys' mean MEMORY USAGE times its keys (absent when no sample's memory could be read).", nil, nil)
	descUnclaimedGroup = prometheus.NewDesc("hourglass_unclaimed_group_keys", "Keys of one of the largest groups of unclaimed keys, by the pattern of their names and the kind discover takes them to be.", []string{"pattern", "kind"}, nil)
)

// maxGroupSeries is how many unclaimed groups get a series.
const maxGroupSeries = 10

// unclaimedGroup is one group's labels and keys.
type unclaimedGroup struct {
	pattern, kind string
	keys          int64
}

// collectUnclaimed writes the unclaimed keys, their estimated memory when it is known (0 with no
// keys), and the keys of the largest groups.
func collectUnclaimed(gauge gaugeFunc, s *snapshot.Snapshot) {
	u := &s.Unclaimed
	gauge(descUnclaimedKeys, float64(u.Keys))
	switch {
	case u.Keys == 0:
		gauge(descUnclaimedBytes, 0)
	case u.Bytes != nil:
		gauge(descUnclaimedBytes, float64(*u.Bytes))
	}
	groups := unclaimedGroups(s)
	for _, g := range groups[:min(maxGroupSeries, len(groups))] {
		gauge(descUnclaimedGroup, float64(g.keys), g.pattern, g.kind)
	}
}

// unclaimedGroups returns the snapshot's groups by their labels, largest first. Groups that share
// a pattern and a kind are one series, so their keys are added up. Patterns are safe ASCII from
// discover; escaping them is a guard (a label must be UTF-8), a no-op on those.
func unclaimedGroups(s *snapshot.Snapshot) []unclaimedGroup {
	var out []unclaimedGroup
	at := map[[2]string]int{}
	for _, g := range s.Unclaimed.Groups {
		k := [2]string{format.Escape(g.Pattern), string(g.Kind)}
		if i, ok := at[k]; ok {
			out[i].keys += g.Keys
			continue
		}
		at[k] = len(out)
		out = append(out, unclaimedGroup{k[0], k[1], g.Keys})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].keys > out[j].keys })
	return out
}

// emptiedValue returns, for a series of the previous snapshot that s does not give, the value it is
// exported at while s is the latest, and whether it is exported at all. A series whose keys are
// gone is exported at 0 (see collector). Two are not. A group that left the largest groups but
// still has keys is exported with them, so it does not read as emptied. The unclaimed memory and a
// union are absent only when unknown (a union skipped over the sweep's budget, or with no key
// today). They are not exported at 0, which would read as known.
func emptiedValue(s *snapshot.Snapshot) func(series) (float64, bool) {
	var groups map[[2]string]int64
	return func(old series) (float64, bool) {
		switch old.desc {
		case descUnclaimedBytes, descUnion: // unknown now (a union skipped over budget), not 0
			return 0, false
		case descUnclaimedGroup:
			if groups == nil {
				groups = map[[2]string]int64{}
				for _, g := range unclaimedGroups(s) {
					groups[[2]string{g.pattern, g.kind}] = g.keys
				}
			}
			return float64(groups[[2]string{old.labels[0], old.labels[1]}]), true
		}
		return 0, true
	}
}
