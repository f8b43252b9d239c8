// Package infer owns the entries hourglass runs on when it is given an address and no config: it
// adopts, for the sweep (as its scanner.Inferrer), the entries discover proposes for the keys no
// entry claims with high or medium confidence, parsed as the config would read them (their names
// kept apart, their zones, a cluster's slots checked), and renders what was adopted, with what is
// still only proposed, as a config file an operator can keep. It does no Redis I/O.
//
// Of hourglass's packages it imports internal/config, internal/discover, internal/format, scanner,
// store and store/jobs.
package infer
