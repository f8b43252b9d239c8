// Package watch keeps a Snapshot current for the commands that poll it (the console, serve and
// discover): its Watcher steps the scanner's sweeps a slice at a time within their budget, starts
// a new one when one completes, and between sweeps reads each counter family's live sample again
// for its total and rate, the job libraries' running totals for theirs, and INFO for the server
// and the Redis time its commands cost. It also gives the drill-down what it reads with (Watched,
// Charge, Pace) and adds entries claimed while it runs (Claim).
//
// The sweep itself (SCAN, pacing, reads, aggregation) is the scanner's; this package only repeats
// it, and the scanner never imports it. Of hourglass's packages it imports internal/estimate,
// internal/format, scanner, snapshot, store and store/jobs: it steps scanner's sweeps into
// snapshot's types, cuts store's families' windows, reads store/jobs' running totals, puts
// estimate's intervals on its live figures and has format say a rate's span.
package watch
