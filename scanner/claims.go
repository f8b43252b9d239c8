package scanner

import (
	"fmt"
	"sort"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/store"
)

// claimAgg gathers the keys that two entries of the config would both claim: each is counted
// once, under the first, and the snapshot warns once per pair of entries, with an example key.
type claimAgg struct {
	labels []string // the sweep's matchers' labels, by index
	pairs  map[[2]string]*claimPair
}

type claimPair struct {
	keys    int64
	example string
}

// maxClaimPairs bounds the pairs a snapshot reports.
const maxClaimPairs = 20

func newClaimAgg(st Structures, loc *time.Location) claimAgg {
	ms := matchers(st, loc)
	labels := make([]string, len(ms))
	for i, m := range ms {
		labels[i] = structLabel(st, m.as, m.spec)
	}
	return claimAgg{labels: labels, pairs: map[[2]string]*claimPair{}}
}

// add notes key k when a second entry would claim it too.
func (c *claimAgg) add(k *Key, st Structures) {
	if k.also == 0 || k.also > len(c.labels) {
		return
	}
	first := c.labelOf(k, st)
	pair := [2]string{first, c.labels[k.also-1]}
	p := c.pairs[pair]
	if p == nil {
		if len(c.pairs) >= maxClaimPairs {
			return
		}
		p = &claimPair{example: format.Escape(k.Name)}
		c.pairs[pair] = p
	}
	p.keys++
}

func (c *claimAgg) labelOf(k *Key, st Structures) string {
	kind := k.kind
	if kind == kindClaimed {
		for _, m := range matchers(st, nil) {
			if m.kind == kindClaimed && m.spec == k.spec {
				return structLabel(st, m.as, m.spec)
			}
		}
	}
	return structLabel(st, kind, k.spec)
}

// warnings are the pairs as sentences, in a stable order.
func (c *claimAgg) warnings() []string {
	out := make([]string, 0, len(c.pairs))
	for pair, p := range c.pairs {
		out = append(out, fmt.Sprintf("%d key(s) fit both %s and %s (e.g. %s): counted once, under %s",
			p.keys, pair[0], pair[1], p.example, pair[0]))
	}
	sort.Strings(out)
	return out
}

// structLabel names a structure entry as the config does: "delay_queue orders".
func structLabel(st Structures, kind keyKind, spec int) string {
	switch kind {
	case kindLimiter:
		return "limiter " + st.Limiters[spec].Name
	case kindLock:
		return "lock " + st.Locks[spec].Name
	case kindDelayQueue:
		return "delay_queue " + st.DelayQueues[spec].Name
	case kindListQueue:
		return "list_queue " + st.ListQueues[spec].Name
	case kindUnique:
		if st.Uniques[spec].Kind == store.Bitmap {
			return "bitmap " + st.Uniques[spec].Family.Name()
		}
		return "unique " + st.Uniques[spec].Family.Name()
	case kindJob:
		return "job_queue " + st.JobQueues[spec].Name
	case kindBloom, kindBloomPart:
		return "bloom " + st.Blooms[spec].Name
	}
	return "?"
}
