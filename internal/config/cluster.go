package config

import (
	"fmt"
	"hourglass/store"
	"strings"
)

// CheckCluster refuses, for a Redis Cluster, a family whose hour and day keys can land in
// different slots: one script could not write both. It runs once the addresses are final (after
// --addr) or when a single address turns out to be a cluster node, and names the pattern's line.
func (cfg *Config) CheckCluster() error {
	for _, f := range cfg.Counters {
		if !f.SharesSlot() {
			return &Error{
				File: cfg.file, Line: cfg.patternLine["counter:"+f.Name()], Key: "counter.pattern",
				Msg: fmt.Sprintf("hour and day keys of %q can land in different cluster slots, so one script "+
					"cannot write both; put the dims in a hash tag: pattern = %q", f.Name(), hashTagged(f.Pattern().String())),
			}
		}
	}
	for _, u := range cfg.Structures.Uniques {
		if f := u.Family; !f.Pattern().SharesSlot() {
			table := "unique" // the [[unique]] table holds the HyperLogLogs
			if u.Kind == store.Bitmap {
				table = "bitmap"
			}
			return &Error{
				File: cfg.file, Line: cfg.patternLine[table+":"+f.Name()], Key: table + ".pattern",
				Msg: fmt.Sprintf("the windows of %q can land in different cluster slots, so its 7- and 30-day unions "+
					"cannot be read in one command; put the part before <window> in a hash tag: pattern = %q", f.Name(), hashTagged(f.Pattern().String())),
			}
		}
	}
	return nil
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
