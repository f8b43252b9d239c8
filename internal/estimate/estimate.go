// Package estimate owns the statistics of part of a sweep: the totals of a keyspace estimated
// from the keys swept so far, with a 95% interval computed from the sample itself. No I/O.
//
// SCAN walks a server's hash table in an order that has nothing to do with key names, so the
// pages a sweep has read are a sample of the keyspace, taken in clusters (a page's keys come
// together). Each figure (a family's keys, a window's total) is estimated with the ratio
// estimator for cluster samples: the figure's sum per key seen, times the keys the server holds.
// Its variance comes from how much the clusters differ from one another, so keys that come in
// clumps (a hash slot whose keys a page reads together) widen the interval as they should. Their
// third moment gives the estimate's skewness, which the interval is corrected for (skew.go). The
// method and its formulas are in docs/estimates.md.
//
// Of hourglass's packages it imports none.
package estimate

import "math"

// Frame is what every cluster of one stratum (a server, or a cluster's master) contributes,
// whatever the figure: how many clusters, and the sums of their keys' powers.
type Frame struct {
	Clusters int
	Keys     float64 // Σ m: keys seen
	KeysSq   float64 // Σ m²
	KeysCu   float64 // Σ m³, for the skewness
}

// Add counts a cluster of m keys.
func (f *Frame) Add(m float64) {
	f.Clusters++
	f.Keys += m
	f.KeysSq += m * m
	f.KeysCu += m * m * m
}

// Sum is one figure's sums over the clusters of a stratum. A cluster where the figure is 0 adds
// nothing, so only the clusters where it is not need to be added.
type Sum struct {
	Clusters int     // clusters where y is not 0
	Y        float64 // Σ y
	YSq      float64 // Σ y²
	KeyY     float64 // Σ m·y
	// The third powers, for the skewness.
	YCu    float64 // Σ y³
	KeyYSq float64 // Σ m·y²
	KeySqY float64 // Σ m²·y
}

// Add counts a cluster of m keys where the figure sums to y.
func (s *Sum) Add(m, y float64) {
	if y != 0 {
		s.Clusters++
	}
	s.Y += y
	s.YSq += y * y
	s.KeyY += m * y
	s.YCu += y * y * y
	s.KeyYSq += m * y * y
	s.KeySqY += m * m * y
}

// Figure is a total estimated from part of a keyspace: the estimate, its 95% interval, and the
// share of the keys the estimate rests on. A Figure whose Coverage is 1 is exact.
type Figure struct {
	Estimate float64 `json:"estimate"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Coverage float64 `json:"coverage"`
	// Seen is the figure's sum over the keys swept so far.
	Seen float64 `json:"seen"`
}

// MinClusters is the fewest clusters an interval is computed from: with fewer, the spread
// between clusters cannot be measured.
const MinClusters = 2

// MinFound is the fewest clusters holding a figure (over the strata not swept to their end) an
// estimate is made from. A figure seen in fewer is rare, or packed into few clusters: a family
// whose keys share one hash tag sits in one slot. The clusters seen cannot say how much of it the
// rest of the keyspace holds. An interval from them would claim more than they know.
const MinFound = 5

// Stratum is one server's sample of a figure: its clusters, the figure's sums over them, the
// keys the server holds (DBSIZE), and whether it was swept to its end (then the sums are exact).
type Stratum struct {
	Frame      Frame
	Sum        Sum
	Population float64
	Done       bool
}

// Total estimates a figure over strata sampled independently, such as a cluster's masters, each
// swept on its own. It is the sum of each stratum's estimate, with their variances and third
// cumulants added; the interval is corrected for the estimate's skewness (skew.go). ok is false,
// and the figure only what was seen so far, in two cases. One is a stratum with keys left to
// sweep that has fewer than MinClusters clusters or no known population. The other is a figure
// found in fewer than MinFound clusters of the strata with keys left.
func Total(strata ...Stratum) (Figure, bool) { return TwoPhase(nil, strata...) }

// TwoPhase is Total for a figure whose clusters' sums are themselves estimated, each from a
// sample of its keys (a second phase, as the live reads sample the keys a sweep has seen).
// second[i], when given, is the variance of that estimate of stratum i's sum over its clusters
// seen. It adds to the stratum's variance scaled by the stratum's keys over the keys seen, the
// two-stage estimator's term; the spread between clusters holds the rest of it. A stratum swept
// to its end adds it as it is.
func TwoPhase(second []float64, strata ...Stratum) (Figure, bool) {
	var est, variance, third, seen, keys, pop float64
	df := math.Inf(1)
	found, open := 0, false
	for i, st := range strata {
		var v2 float64
		if i < len(second) {
			v2 = second[i]
		}
		seen += st.Sum.Y
		keys += st.Frame.Keys
		if st.Done {
			est += st.Sum.Y
			pop += st.Frame.Keys
			variance += v2
			continue
		}
		if st.Frame.Clusters < MinClusters || st.Frame.Keys <= 0 || !(st.Population > 0) {
			return Figure{}, false
		}
		p := math.Max(st.Population, st.Frame.Keys) // keys deleted since DBSIZE was read
		pop += p
		found += st.Sum.Clusters
		open = true
		m := st.moments(p)
		est += m.est
		variance += m.k2 + p/st.Frame.Keys*v2
		third += m.k3
		df = math.Min(df, float64(st.Frame.Clusters-1))
	}
	if open && found < MinFound {
		return Figure{}, false
	}
	below, above := interval(variance, third, TQuantile975(df))
	fig := Figure{Estimate: est, Low: est - below, High: est + above, Seen: seen}
	if pop > 0 {
		fig.Coverage = math.Min(keys/pop, 1)
	}
	if variance == 0 && df == math.Inf(1) {
		fig.Coverage = 1 // every stratum swept to its end
	}
	return fig, true
}

// AtLeastSeen raises Low to what was seen, for a figure that cannot shrink as more keys are
// swept (a count of keys).
func (f Figure) AtLeastSeen() Figure {
	f.Low = math.Max(f.Low, f.Seen)
	f.Estimate = math.Max(f.Estimate, f.Seen)
	return f
}

// Exact reports whether the figure rests on every key (its interval is a point).
func (f Figure) Exact() bool { return f.Coverage >= 1 && f.Low == f.High }

// RelHalfWidth is the interval's half width relative to the estimate (0.023 for ±2.3%); +Inf for
// an estimate of 0 with a width.
func (f Figure) RelHalfWidth() float64 {
	w := (f.High - f.Low) / 2
	if w <= 0 {
		return 0
	}
	if f.Estimate == 0 {
		return math.Inf(1)
	}
	return w / math.Abs(f.Estimate)
}

// tTable is Student's t 0.975 quantile for 1 to 30 degrees of freedom.
var tTable = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// TQuantile975 is Student's t 0.975 quantile for df degrees of freedom: the half width of a
// two-sided 95% interval in standard errors, 1.96 for many. Past 30 it is interpolated in 1/df
// towards 1.96, which is within 0.001 of the exact value.
func TQuantile975(df float64) float64 {
	switch {
	case math.IsInf(df, 1) || df > 1e6:
		return 1.959964
	case df < 1:
		return math.Inf(1)
	case df <= 30:
		return tTable[int(df)-1]
	}
	// Between df 30 and infinity, t is close to linear in 1/df.
	return 1.959964 + (tTable[29]-1.959964)*30/df
}

// Shown is a figure as the front ends show it and the JSON carries it: the estimate, its 95%
// interval and the share of the keys it rests on. When it could not be estimated (Total's ok is
// false), SoFar is set: it is what was seen so far, Low is that too, and High is unknown (nil).
type Shown struct {
	Estimate float64  `json:"estimate"`
	Low      float64  `json:"low"`
	High     *float64 `json:"high"`
	Coverage float64  `json:"coverage"`
	Seen     float64  `json:"seen"`
	SoFar    bool     `json:"so_far,omitempty"`
}

// Show estimates a figure over strata as Total does, to be shown; coverage is the share swept,
// said of a figure that could not be estimated.
func Show(coverage float64, strata ...Stratum) Shown {
	fig, ok := Total(strata...)
	if !ok {
		var seen float64
		for _, s := range strata {
			seen += s.Sum.Y
		}
		return Shown{Estimate: seen, Low: seen, Coverage: coverage, Seen: seen, SoFar: true}
	}
	high := fig.High
	return Shown{Estimate: fig.Estimate, Low: fig.Low, High: &high, Coverage: fig.Coverage, Seen: fig.Seen}
}

// AtLeastSeen raises the estimate and its low end to what was seen, for a figure that cannot
// shrink as more keys are swept (a count of keys).
func (s Shown) AtLeastSeen() Shown {
	if !s.SoFar {
		s.Low = math.Max(s.Low, s.Seen)
		s.Estimate = math.Max(s.Estimate, s.Seen)
	}
	return s
}
