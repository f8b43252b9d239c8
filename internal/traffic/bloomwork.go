package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// A Bloom filter in front of a lookup, the cache-penetration guard. Each new record's id is added
// as it is created, and every lookup asks the filter first. So ids that were never created (a
// scraper's, an attacker's) are turned away before they reach the cache or the database. The demo
// and a [[profile]] drive one filter of each [[bloom]] entry that way.

// Bloom filters the demo and profiles create: small, so the demo's scales within minutes.
var (
	demoBloom    = store.BloomOptions{Capacity: 2_000, ErrorRate: 0.01}
	profileBloom = store.BloomOptions{Capacity: 100_000, ErrorRate: 0.01}
)

// bloomKey is the filter a demo or profile drives for spec: its pattern's key with the first
// sample dims, with test values on a real Redis (never an application's filter, whose error
// rate test ids would raise). A pattern with no placeholder names one filter, the
// application's: on a real Redis it is refused.
func bloomKey(spec scanner.BloomSpec, embedded bool) (string, error) {
	dims := make([]string, len(spec.Pattern.Dims()))
	if len(dims) == 0 && !embedded {
		return "", fmt.Errorf("bloom %s: its pattern %s names one filter, the application's; test traffic goes to a test filter, so the pattern needs a placeholder (bf:<name>)", spec.Name, spec.Pattern)
	}
	for i, name := range spec.Pattern.Dims() {
		dims[i] = dimValue(name, 0)
		if !embedded {
			dims[i] = store.TestValue(dims[i])
		}
	}
	return spec.Pattern.Key(dims, "")
}

// bloomGuard is one filter in front of a lookup: ids 0..created−1 exist.
type bloomGuard struct {
	filter  *store.Bloom
	created int64
	// what it did: ids added, lookups, and lookups turned away (never created, and said so)
	added, lookups, turned atomic.Int64
}

func newBloomGuard(st *store.Store, spec scanner.BloomSpec, opt store.BloomOptions, embedded bool) (*bloomGuard, error) {
	key, err := bloomKey(spec, embedded)
	if err != nil {
		return nil, err
	}
	f, err := st.Bloom(key, opt)
	if err != nil {
		return nil, err
	}
	return &bloomGuard{filter: f}, nil
}

// step creates n records (their ids added) and looks up 2n ids: nine in ten ids that exist, one
// in ten that never did. It returns the operations Redis confirmed.
func (g *bloomGuard) step(ctx context.Context, rnd *rand.Rand, n int) (int64, error) {
	if n <= 0 {
		return 0, nil
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("id", g.created+int64(i))
	}
	if _, err := g.filter.AddMany(ctx, ids...); err != nil {
		return 0, err
	}
	g.created += int64(n)
	g.added.Add(int64(n))
	looked := make([]string, 2*n)
	for i := range looked {
		if rnd.IntN(10) == 0 {
			looked[i] = fmt.Sprint("ghost", rnd.Int64()) // never created
		} else {
			looked[i] = fmt.Sprint("id", rnd.Int64N(g.created))
		}
	}
	held, err := g.filter.ExistsMany(ctx, looked...)
	if err != nil {
		return int64(n), err
	}
	g.lookups.Add(int64(len(looked)))
	for _, h := range held {
		if !h {
			g.turned.Add(1)
		}
	}
	return int64(n + len(looked)), nil
}

// bloomWork is a [[profile]] entry's work on a [[bloom]] entry: each batch of n operations
// creates n/3 records and looks up twice as many ids; it counts the operations.
func bloomWork(ctx context.Context, st *store.Store, spec scanner.BloomSpec, r *profileResult, rnd *rand.Rand, embedded bool, user string) (work, error) {
	g, err := newBloomGuard(st, spec, profileBloom, embedded)
	if err != nil {
		return work{}, err
	}
	r.extra = " on " + g.filter.Key
	return work{batch: func(run context.Context, n int) (int64, error) {
		var done int64
		for ; n > 0 && run.Err() == nil; n -= 3 * store.BloomBatch {
			k, err := g.step(ctx, rnd, max(min(n, 3*store.BloomBatch)/3, 1))
			done += k
			if err != nil {
				return done, refusal(err, "EVALSHA", g.filter.Key, user)
			}
		}
		return done, nil
	}, finish: func(context.Context) (int64, error) {
		r.extra += fmt.Sprintf(" added=%d lookups=%d turned_away=%d", g.added.Load(), g.lookups.Load(), g.turned.Load())
		return 0, nil
	}}, nil
}
