package inspect

import (
	"context"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// searchStep is how long one step of a search reads (at least one page) before the console
// hears of it: matches and progress stream at that pace.
const searchStep = 250 * time.Millisecond

// StartSearch is a search of sections secs of ref's queue for query (jobs.ParseMatch: a
// substring of the payload, or path=value for a JSON field), run a step at a time by the function
// it returns: each call reads on for about a quarter second (at least a page), within the sweep's
// keys per second, charged to the sweep's budget so the sweep waits for it, and returns the new
// matches and where the search is. Calls must not overlap; stopping is calling no more. It reads
// nothing itself; a query store.ParseMatch refuses is an error.
func (in *Inspector) StartSearch(ref snapshot.QueueRef, secs []snapshot.TaskSection, query string) (func(context.Context) ([]snapshot.Found, snapshot.SearchProgress, error), error) {
	q := in.open(ref)
	if q == nil {
		return nil, errNoQueue
	}
	m, err := jobs.ParseMatch(query)
	if err != nil {
		return nil, err
	}
	s := jobs.NewSearcher(q, secs, m, jobs.SearchOptions{KeysPerSecond: in.w.KeysPerSecond(), Charge: in.w.Charge, Now: in.w.Now})
	return func(ctx context.Context) ([]snapshot.Found, snapshot.SearchProgress, error) {
		found, prog, err := s.Step(ctx, in.rdb, searchStep)
		return found, prog, in.refusal(err, where(ref))
	}, nil
}
