package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxSampleFor is the longest --for: a day, past which a sweep is no sample.
const maxSampleFor = 24 * time.Hour

// sampleFlags are --sample and --for of snapshot and discover: a sweep that stops at a share of
// the keyspace or after a while, whichever comes first, and scales what it saw.
type sampleFlags struct {
	share float64       // 0 < share < 1; 0 when --sample is not given or is 100%
	dur   time.Duration // 0 when --for is not given
}

// register adds the two flags to fs.
func (s *sampleFlags) register(fs *flag.FlagSet) {
	fs.Var(&percentFlag{s: s}, "sample", "stop once `P%` of the keys the servers hold (DBSIZE) are seen, P above 0 and at\nmost 100 (5% or 5); the figures are then estimates with their 95% intervals")
	numberVar(fs, &s.dur, "for", 0, time.Nanosecond, maxSampleFor, "stop after `D` (30s, 5m; above 0, at most 24h), whichever comes first with --sample;\nthe figures are then estimates with their 95% intervals")
}

// percentFlag is --sample: "5%" or "5", a percent above 0 and at most 100.
type percentFlag struct {
	s       *sampleFlags
	text    string
	refused string
}

func (f *percentFlag) String() string { return f.text }

func (f *percentFlag) Set(v string) error {
	p, err := parsePercent(v)
	if err != nil {
		f.refused = v + " " + err.Error()
		return err
	}
	f.text = v
	f.s.share = p / 100
	if p == 100 {
		f.s.share = 0 // the whole keyspace: no stop
	}
	return nil
}

func (f *percentFlag) refusedValue() string { return f.refused }

// parsePercent reads "5%", "5" or "0.5%" as a percent above 0 and at most 100.
func parsePercent(v string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("is not a percentage such as 5%%")
	case math.IsNaN(p) || math.IsInf(p, 0):
		return 0, fmt.Errorf("is not a finite number")
	case p < 0:
		return 0, fmt.Errorf("must not be negative")
	case p == 0:
		return 0, fmt.Errorf("must be above 0%%")
	case p > 100:
		return 0, fmt.Errorf("must be at most 100%%")
	}
	return p, nil
}

// slice is how long a discover poll runs, elapsed into the sweep that has seen coverage of dbSize
// keys at budget keys a second. It is pollSlice, or less when what is left of --for, or of
// --sample's keys at the budget, is less. So a sample passes its share by little.
func (s sampleFlags) slice(elapsed time.Duration, coverage float64, dbSize int64, budget int) time.Duration {
	d := pollSlice
	if s.dur > 0 {
		d = min(d, s.dur-elapsed)
	}
	if s.share > 0 && coverage == 0 {
		d = min(d, pollSlice/5) // the first look: the keyspace's size is not known yet
	}
	if s.share > 0 && coverage > 0 && dbSize > 0 && budget > 0 {
		left := (s.share - coverage) * float64(dbSize) / float64(budget)
		d = min(d, time.Duration(left*float64(time.Second)))
	}
	return max(d, 20*time.Millisecond)
}

// reached reports whether a sweep that has seen coverage of the keyspace in elapsed is done as a
// sample.
func (s sampleFlags) reached(coverage float64, elapsed time.Duration) bool {
	return s.share > 0 && coverage >= s.share || s.dur > 0 && elapsed >= s.dur
}
