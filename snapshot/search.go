package snapshot

import "github.com/hourglass-dev/hourglass/store/jobs"

// A search of a queue's tasks (internal/inspect runs it through jobs.Searcher, a step at a time
// for the console) answers in store/jobs' types: the tui reaches them through the snapshot.
type (
	Found          = jobs.Found
	SearchProgress = jobs.SearchProgress
)
