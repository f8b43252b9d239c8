package discover

import (
	"strings"

	"hourglass/store"
)

// Library is a job library or limiter library whose keys are recognised by their names, with
// the library's default prefix (a user who set their own prefix names it in the config; see the
// discover docs).
type Library struct {
	Name    string
	Job     store.JobLayout     // for a job library
	Limiter store.LimiterLayout // for a limiter library (not Hourglass)
	source  store.JobSource
	prefix  string // a limiter library's key prefix
}

// Libraries are the job and limiter libraries hourglass reads, with their default prefixes.
func Libraries() []Library {
	var out []Library
	for _, l := range []store.JobLayout{store.Sidekiq, store.BullMQ, store.RQ, store.Celery, store.Asynq} {
		out = append(out, Library{Name: string(l), Job: l, source: store.JobSource{Layout: l, Prefix: l.DefaultPrefix()}})
	}
	for _, l := range []store.LimiterLayout{store.Limits, store.RateLimiterFlexible, store.RedisRate} {
		p := l.DefaultPattern()
		out = append(out, Library{Name: l.String(), Limiter: l, prefix: p[:strings.IndexByte(p, '<')]})
	}
	return out
}

// library returns the library whose key name is, if any, and whether name is where it registers
// its queues. Names a library shares with other
// programs (Sidekiq's queue:<name> lists, Celery's queue lists named after the queue) are left to
// the shapes: alone they prove nothing. g.mu is held.
func (g *Groups) library(name string) (*Library, bool) {
	for i := range g.opt.Sources {
		l := &g.opt.Sources[i]
		if l.Job != "" {
			// A prefix other than Celery's starts each of the library's keys as "<prefix>:":
			// checking that costs far less than Classify, which every unclaimed key would pay.
			if p := l.source.Prefix; p != "" && l.Job != store.Celery && !(len(name) > len(p) && name[len(p)] == ':' && name[:len(p)] == p) {
				continue
			}
			k, ok := l.source.Classify(name)
			if ok && !ambiguous(l.Job, name, k) {
				return l, k.Registry
			}
			continue
		}
		if len(name) > len(l.prefix) && strings.HasPrefix(name, l.prefix) {
			return l, false
		}
	}
	return nil, false
}

// claims reports whether the library would claim name, ambiguous names included.
func (l *Library) claims(name string) bool {
	if l.Job != "" {
		_, ok := l.source.Classify(name)
		return ok
	}
	return strings.HasPrefix(name, l.prefix)
}

// ambiguous reports whether a name a job library claims could as well be anyone's.
func ambiguous(l store.JobLayout, name string, k store.JobKey) bool {
	switch l {
	case store.Sidekiq:
		return strings.HasPrefix(name, "queue:")
	case store.Celery:
		return k.Queue != "" // a queue's list is named after the queue: "celery", "emails"
	}
	return false
}
