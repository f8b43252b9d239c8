// Package infer owns the entries hourglass runs on when it is given an address and no config. As
// the sweep's scanner.Inferrer, it adopts the entries discover proposes with high or medium
// confidence for the keys no entry claims. They are parsed as the config would read them: their
// names kept apart, their zones, a cluster's slots checked. It renders what was adopted, with what
// is still only proposed, as a config file an operator can keep. It does no Redis I/O.
//
// Of hourglass's packages it imports internal/config, internal/discover, internal/format, scanner,
// store and store/jobs.
package infer
