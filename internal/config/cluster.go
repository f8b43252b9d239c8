package config

import (
	"fmt"
	"strings"

	"github.com/hourglass-dev/hourglass/store"
)

// CheckCluster refuses, for a Redis Cluster, a family whose hour and day keys can land in
// different slots: one script could not write both. It runs once the addresses are final (after
// --addr) or when a single address turns out to be a cluster node, and names the pattern's line.
// It returns the first of ClusterProblems.
func (cfg *Config) CheckCluster() error {
	if errs := cfg.ClusterProblems(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ClusterProblems are the families a Redis Cluster cannot serve whole, one error each, naming the
// pattern's line and the fix. One is a counter whose hour and day keys can land in different slots:
// one script could not write both. Another is a unique whose windows can: its unions could not be
// read in one command. A command that writes refuses them; one that only reads warns of them.
func (cfg *Config) ClusterProblems() []*Error {
	var errs []*Error
	for _, f := range cfg.Counters {
		if !f.SharesSlot() {
			errs = append(errs, &Error{
				File: cfg.file, Line: cfg.patternLine["counter:"+f.Name()], Key: "counter.pattern",
				Msg: fmt.Sprintf("hour and day keys of %q can land in different cluster slots, so one script "+
					"cannot write both; put the dims in a hash tag: pattern = %q", f.Name(), hashTagged(f.Pattern().String())),
			})
		}
	}
	for _, u := range cfg.Structures.Uniques {
		if f := u.Family; !f.Pattern().SharesSlot() {
			table := "unique" // the [[unique]] table holds the HyperLogLogs
			if u.Kind == store.Bitmap {
				table = "bitmap"
			}
			errs = append(errs, &Error{
				File: cfg.file, Line: cfg.patternLine[table+":"+f.Name()], Key: table + ".pattern",
				Msg: fmt.Sprintf("the windows of %q can land in different cluster slots, so its 7- and 30-day unions "+
					"cannot be read in one command; put the part before <window> in a hash tag: pattern = %q", f.Name(), hashTagged(f.Pattern().String())),
			})
		}
	}
	return errs
}

// Watches reports whether the config has an entry that claims keys: a counter family, a queue, a
// limiter, a unique, a lock, a job library's queues or Bloom filters.
func (cfg *Config) Watches() bool {
	s := cfg.Structures
	return len(cfg.Counters)+len(s.DelayQueues)+len(s.ListQueues)+len(s.Limiters)+len(s.Uniques)+len(s.Locks)+len(s.JobQueues)+len(s.Blooms) > 0
}

// hashTagged suggests a version of pattern whose hour and day keys share a cluster slot: the
// text from its first placeholder up to the separator before <window>, wrapped in braces.
func hashTagged(pattern string) string {
	const example = "stat:{<tenant>:<endpoint>}:<window>"
	w := strings.Index(pattern, "<window>")
	if strings.ContainsAny(pattern, "{}") || w < 2 || strings.LastIndexByte(pattern, '<') != w {
		return example
	}
	from := strings.IndexByte(pattern, '<')
	if from == w {
		from = 0 // no dims: tag the literal prefix
	}
	return pattern[:from] + "{" + pattern[from:w-1] + "}" + pattern[w-1:]
}
