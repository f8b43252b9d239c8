package snapshot

import "github.com/hourglass-dev/hourglass/store/jobs"

// A search of a queue's tasks (internal/inspect runs it through store.Searcher, a step at a time
// for the console) answers in the store's types: the tui reaches them through the snapshot.
type (
	Found          = jobs.Found
	SearchProgress = jobs.SearchProgress
)
