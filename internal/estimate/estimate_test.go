package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIntervalCoversTheTruth samples clusters of a known population without replacement, as a
// sweep's prefix does, and counts how often the stated 95% interval holds the true total: a
// sound interval holds it in about 95 of 100 trials, and the figure is checked on two
// populations, one of them clumpy (most of the total in a few clusters, as a hash slot full of
// one tag's keys makes it).
func TestIntervalCoversTheTruth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clump float64 // the chance a cluster is a clump holding 10x the usual
	}{{"even", 0}, {"clumpy", 0.05}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const clusters = 4000
			m := make([]float64, clusters)
			y := make([]float64, clusters)
			var truth, pop float64
			for i := range m {
				m[i] = float64(800 + rng.IntN(400))
				share := 0.1 + 0.05*rng.NormFloat64()
				if rng.Float64() < tc.clump {
					share *= 10
				}
				y[i] = math.Max(0, math.Round(m[i]*share*3))
				truth += y[i]
				pop += m[i]
			}
			hits, trials := 0, 400
			for range trials {
				order := rng.Perm(clusters)
				var f Frame
				var s Sum
				for _, i := range order[:200] { // 5% coverage
					f.Add(m[i])
					if y[i] != 0 {
						s.Add(m[i], y[i])
					}
				}
				fig, ok := Total(Stratum{Frame: f, Sum: s, Population: pop})
				if !ok {
					t.Fatal("no estimate from 200 clusters")
				}
				if fig.Coverage < 0.04 || fig.Coverage > 0.06 {
					t.Fatalf("coverage %.3f, want about 0.05", fig.Coverage)
				}
				if fig.Low <= truth && truth <= fig.High {
					hits++
				}
			}
			rate := float64(hits) / float64(trials)
			if rate < 0.91 || rate > 0.99 {
				t.Fatalf("the 95%% interval held the truth in %.1f%% of %d trials", 100*rate, trials)
			}
		})
	}
}

// TestSweptToTheEndIsExact: a stratum swept to its end adds its sums as they are, with no width.
func TestSweptToTheEndIsExact(t *testing.T) {
	var f Frame
	var s Sum
	for _, c := range [][2]float64{{10, 3}, {12, 0}, {9, 7}} {
		f.Add(c[0])
		s.Add(c[0], c[1])
	}
	fig, ok := Total(Stratum{Frame: f, Sum: s, Population: 1e6, Done: true})
	if !ok || fig.Estimate != 10 || fig.Low != 10 || fig.High != 10 || !fig.Exact() {
		t.Fatalf("got %+v %v, want exactly 10", fig, ok)
	}
}

// TestStrataAdd: two masters' estimates add, and so do their variances; one master swept to its
// end adds its exact sum. The clusters' spread is symmetric, so no skewness moves the interval.
func TestStrataAdd(t *testing.T) {
	half := func(done bool) Stratum {
		var st Stratum
		for i := range 10 {
			st.Frame.Add(100)
			st.Sum.Add(100, float64(10+i%2))
		}
		st.Population, st.Done = 10000, done
		return st
	}
	a, okA := Total(half(false))
	both, ok := Total(half(false), half(false))
	if !okA || !ok {
		t.Fatal("no estimate")
	}
	if math.Abs(both.Estimate-2*a.Estimate) > 1e-9 {
		t.Fatalf("two like strata estimate %v, want twice %v", both.Estimate, a.Estimate)
	}
	// Variances add: the half width grows by √2, with the t quantile of the same df.
	if w, w1 := both.High-both.Estimate, a.High-a.Estimate; math.Abs(w-w1*math.Sqrt2) > 1e-6*w {
		t.Fatalf("half width %v, want %v·√2", w, w1)
	}
	done := half(true)
	mixed, _ := Total(half(false), done)
	if want := a.Estimate + done.Sum.Y; math.Abs(mixed.Estimate-want) > 1e-9 || mixed.High-mixed.Estimate != a.High-a.Estimate {
		t.Fatalf("mixed %+v, want %v with the first master's width", mixed, want)
	}
	if _, ok := Total(Stratum{Frame: Frame{Clusters: 1, Keys: 5, KeysSq: 25}, Population: 100}); ok {
		t.Fatal("an estimate from one cluster")
	}
	if _, ok := Total(Stratum{Frame: Frame{Clusters: 5, Keys: 50, KeysSq: 500}}); ok {
		t.Fatal("an estimate with no known population")
	}
}

func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{{1, 12.706}, {10, 2.228}, {30, 2.042}, {60, 2.000}, {120, 1.980}, {math.Inf(1), 1.960}} {
		if got := TQuantile975(c.df); math.Abs(got-c.want) > 0.002 {
			t.Errorf("t(0.975, %v) = %.4f, want %.3f", c.df, got, c.want)
		}
	}
}

// TestRareFigureIsOnlySoFar: a figure found in fewer than MinFound clusters is not scaled, since
// the clusters seen cannot say how much of it the rest holds.
func TestRareFigureIsOnlySoFar(t *testing.T) {
	var st Stratum
	st.Population = 1e6
	for i := range 100 {
		st.Frame.Add(1000)
		if i < MinFound-1 {
			st.Sum.Add(1000, 3)
		}
	}
	if fig, ok := Total(st); ok {
		t.Fatalf("a figure found in %d clusters estimated as %+v", MinFound-1, fig)
	}
	st.Sum.Add(1000, 3)
	if _, ok := Total(st); !ok {
		t.Fatalf("no estimate from %d clusters holding the figure", MinFound)
	}
}

// TestSkewedFigureMissesOnBothSides samples clusters of a figure whose values are skewed (about
// one key of it a cluster, its value 1 + a log-normal of shape 1.2, as bench --scale's trial
// families draw theirs) at 1% coverage, 2,000 times with fixed seeds. Most samples miss the rare
// large values, so the estimate is below the truth more often than above. The interval, corrected
// for the estimate's skewness, must still hold the truth in 92% of trials or more, and leave it
// above no more than three times as often as below. The symmetric interval held it in 90.9%,
// the truth above it 171 times and below it 10.
func TestSkewedFigureMissesOnBothSides(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	const clusters, sampled, trials = 10000, 100, 2000
	m := make([]float64, clusters)
	y := make([]float64, clusters)
	var truth, pop float64
	for i := range m {
		m[i] = float64(80 + rng.IntN(40))
		for range 3 {
			if rng.Float64() < 0.3 {
				y[i] += 1 + math.Floor(20*math.Exp(1.2*rng.NormFloat64()))
			}
		}
		truth += y[i]
		pop += m[i]
	}
	inside, below, above := 0, 0, 0
	for range trials {
		st := Stratum{Population: pop}
		for _, i := range rng.Perm(clusters)[:sampled] {
			st.Frame.Add(m[i])
			if y[i] != 0 {
				st.Sum.Add(m[i], y[i])
			}
		}
		fig, ok := Total(st)
		if !ok {
			t.Fatalf("no estimate from %d clusters", sampled)
		}
		switch {
		case truth < fig.Low:
			below++
		case truth > fig.High:
			above++
		default:
			inside++
		}
	}
	t.Logf("%d of %d intervals held the truth; it was below %d and above %d", inside, trials, below, above)
	if inside*100 < trials*92 || above > 3*below {
		t.Fatalf("%d of %d intervals held the truth (below %d, above %d); want 92%% or more, and no more than three times as many above as below",
			inside, trials, below, above)
	}
}
