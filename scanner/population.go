package scanner

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// readPopulation reads the keys a master holds (DBSIZE, which costs Redis nothing), so a sweep
// under way can say how much of the keyspace it has seen and scale what it saw. A master that
// refuses it keeps its last figure, and populationNote says why.
func (s *Sweep) readPopulation(ctx context.Context, addr string, c redis.Cmdable) {
	n, err := c.DBSize(ctx).Result()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.populationNote = "DBSIZE: " + err.Error()
		}
		return
	}
	s.population[addr] = n
}

// MasterProgress is how far a sweep has come on one master ("" on a standalone server).
type MasterProgress struct {
	DBSize int64 // the keys it held when last read; 0 when unknown
	Done   bool  // swept to its end
}

// Progress is how far a sweep has come on each master it began on, and why the keys they hold
// are unknown when they are (DBSIZE refused).
type Progress struct {
	Masters map[string]MasterProgress
	Note    string
	// At is when it was read, for the pace the ETA is drawn from.
	At time.Time
}

// Progress returns how far the sweep has come, for Aggregator.SetProgress.
func (s *Sweep) Progress() Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Progress{Masters: map[string]MasterProgress{}, Note: s.populationNote, At: time.Now()}
	for addr, done := range s.done {
		p.Masters[addr] = MasterProgress{DBSize: s.population[addr], Done: done}
	}
	for addr, n := range s.population {
		if _, ok := p.Masters[addr]; !ok {
			p.Masters[addr] = MasterProgress{DBSize: n}
		}
	}
	return p
}
