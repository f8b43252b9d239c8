package config

import (
	"sort"

	"github.com/hourglass-dev/hourglass/store"
)

// Profile is a [[profile]]: test traffic mixing kinds, each structure at its own rate.
type Profile struct {
	Name    string
	Entries []ProfileEntry
}

// ProfileEntry is one structure of a profile and its events a second.
type ProfileEntry struct {
	Kind, Name string // kind: counter, delay_queue, list_queue, limiter, unique, bitmap, lock, bloom
	Rate       float64
}

// profileKinds are the kinds a [[profile]] can drive, as its keys name them.
var profileKinds = []string{"counter", "delay_queue", "list_queue", "limiter", "unique", "bitmap", "lock", "bloom"}

// profiles builds the [[profile]] tables, checking that each names structures the config has.
func (c *checker) profiles(root table, cfg *Config) []Profile {
	known := map[string]map[string]bool{}
	for _, k := range profileKinds {
		known[k] = map[string]bool{}
	}
	for _, f := range cfg.Counters {
		known["counter"][f.Name()] = true
	}
	s := cfg.Structures
	for _, q := range s.DelayQueues {
		known["delay_queue"][q.Name] = true
	}
	for _, q := range s.ListQueues {
		known["list_queue"][q.Name] = true
	}
	for _, l := range s.Limiters {
		known["limiter"][l.Name] = true
	}
	for _, u := range s.Uniques {
		known[map[store.UniqueKind]string{store.HyperLogLog: "unique", store.Bitmap: "bitmap"}[u.Kind]][u.Family.Name()] = true
	}
	for _, l := range s.Locks {
		known["lock"][l.Name] = true
	}
	for _, b := range s.Blooms {
		known["bloom"][b.Name] = true
	}
	var out []Profile
	seen := map[string]bool{}
	for _, t := range c.arrayTables(root, "profile") {
		start := len(c.errs)
		c.onlyKeys(t, "[[profile]]", append([]string{"name"}, profileKinds...)...)
		name, ok := c.str(t, "name")
		if _, present := t.m["name"]; !present {
			c.fail(t.path+".name", "missing: every [[profile]] needs a name")
		}
		if ok && (seen[name] || name == "demo") {
			c.fail(t.path+".name", "duplicate profile name %q (demo is built in)", name)
		}
		seen[name] = true
		p := Profile{Name: name}
		for _, kind := range profileKinds {
			sub, ok := c.subtable(t, kind)
			if !ok {
				continue
			}
			keys := make([]string, 0, len(sub.m))
			for k := range sub.m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				rate, bad := rateIn(sub.m[k], maxProfileRate)
				switch {
				case !known[kind][k]:
					c.fail(sub.path+"."+k, "no %s named %q in this config", kind, k)
				case bad != "":
					c.fail(sub.path+"."+k, "%s", bad)
				default:
					p.Entries = append(p.Entries, ProfileEntry{Kind: kind, Name: k, Rate: rate})
				}
			}
		}
		if len(p.Entries) == 0 && ok && len(c.errs) == start {
			c.fail(t.path, "profile %q drives nothing: give rates such as counter = { flow = 500 }", name)
		}
		out = append(out, p)
	}
	return out
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
