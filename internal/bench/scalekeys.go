package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// scaleTrials is how many trial families the scale keyspace holds: each is one independent
// trial of the estimates' intervals (see docs/benchmarks.md, "Estimates at scale").
const scaleTrials = 50

// scaleFam is one family of the scale keyspace: its spec, the windows its keys are written in,
// how each tuple's dims are named, and how its values are drawn.
type scaleFam struct {
	fam     *store.Family
	trial   bool // one of the trial families
	tagged  bool // its keys share hash tags: a run of tuples sits in one slot
	share   float64
	windows []scaleWindow
	dims    func(t int) []string
	value   func(r *rand.Rand) int64
	// present is the chance a tuple has a key in each window (a user active in that hour).
	present float64
}

// scaleWindow is one window a family's keys are written in, with the key's expiry and whether
// it is the family's current window of its granularity.
type scaleWindow struct {
	w        store.Window
	name     string
	expireAt int64 // Unix seconds: the window-aligned EXPIREAT
	current  bool
}

// scaleFamilies returns the families of the scale keyspace, their windows cut at now (UTC):
// hour counters over 5 hours (half the keys), day counters over 3 days, a hash-tagged family
// with hour and day windows whose tuple's keys share a slot, and scaleTrials trial families
// of hour counters, every other one hash-tagged, each with values drawn its own way.
func scaleFamilies(now time.Time) []*scaleFam {
	h, d := 24*time.Hour, 7*24*time.Hour
	fams := []*scaleFam{
		{fam: mustFamily("pv", "pv:<site>:<user>:<window>", "yyyyMMddHH", "", h, 0), share: 0.5, present: 0.6,
			dims:  func(t int) []string { return []string{"s" + strconv.Itoa(t%500), "u" + strconv.Itoa(t)} },
			value: expValue(8)},
		{fam: mustFamily("dc", "dc:<app>:<device>:<window>", "", "yyyyMMdd", 0, d), share: 0.125, present: 0.7,
			dims:  func(t int) []string { return []string{"a" + strconv.Itoa(t%40), "d" + strconv.Itoa(t)} },
			value: logNormalValue(30, 1)},
		{fam: mustFamily("ad", "ad:{<channel>:<ad>}:<window>", "yyyyMMddHH", "yyyyMMdd", h, d), share: 0.125, present: 0.6, tagged: true,
			dims:  func(t int) []string { return []string{"c" + strconv.Itoa(t%12), strconv.Itoa(t)} },
			value: expValue(50)},
	}
	for i := range scaleTrials {
		r := rand.New(rand.NewPCG(uint64(i), 77))
		mean := math.Exp(math.Log(2) + r.Float64()*math.Log(100)) // 2 to 200, evenly in log
		sf := &scaleFam{trial: true, tagged: i%2 == 1, share: 0.25 / scaleTrials, present: 0.5 + r.Float64()*0.4}
		if (i/2)%2 == 0 {
			sf.value = expValue(mean)
		} else {
			sf.value = logNormalValue(mean, 1.2)
		}
		name := fmt.Sprintf("t%02d", i)
		if sf.tagged { // 16 tuples a tag: clumps of about 50 keys in one slot
			sf.fam = mustFamily(name, name+":{<grp>}:<item>:<window>", "yyyyMMddHH", "", h, 0)
			sf.dims = func(t int) []string { return []string{"g" + strconv.Itoa(t/16), strconv.Itoa(t)} }
		} else {
			sf.fam = mustFamily(name, name+":<a>:<b>:<window>", "yyyyMMddHH", "", h, 0)
			sf.dims = func(t int) []string { return []string{"a" + strconv.Itoa(t%100), strconv.Itoa(t)} }
		}
		fams = append(fams, sf)
	}
	for _, sf := range fams {
		sf.windows = windowsAt(sf.fam, now)
	}
	return fams
}

// windowsAt is the windows a family's keys are written in: the current hour and the 4 before,
// and the current day (the current day and the 2 before when it has no hours).
func windowsAt(f *store.Family, now time.Time) []scaleWindow {
	var out []scaleWindow
	add := func(g store.Granularity, back int) {
		wf, _ := f.Format(g)
		w := store.WindowAt(g, now, time.UTC)
		for i := 0; i < back; i++ {
			w = w.Prev()
		}
		out = append(out, scaleWindow{w: w, name: wf.Format(w), expireAt: f.ExpireAt(w).Unix(), current: back == 0})
	}
	if f.Has(store.Hour) {
		for back := range 5 {
			add(store.Hour, back)
		}
		if f.Has(store.Day) {
			add(store.Day, 0)
		}
		return out
	}
	for back := range 3 {
		add(store.Day, back)
	}
	return out
}

func mustFamily(name, pattern, hourFormat, dayFormat string, hourRet, dayRet time.Duration) *store.Family {
	f, err := store.NewFamily(store.FamilySpec{Name: name, Pattern: pattern, HourFormat: hourFormat, DayFormat: dayFormat,
		HourRetention: hourRet, DayRetention: dayRet, Location: time.UTC})
	if err != nil {
		panic(err) // the specs above are valid
	}
	return f
}

// expValue draws 1 + an exponential of mean m, rounded down.
func expValue(m float64) func(*rand.Rand) int64 {
	return func(r *rand.Rand) int64 { return 1 + int64(r.ExpFloat64()*m) }
}

// logNormalValue draws 1 + a log-normal of median m and shape sigma, rounded down: a skewed
// distribution with a long tail, which a sample's interval finds harder.
func logNormalValue(m, sigma float64) func(*rand.Rand) int64 {
	return func(r *rand.Rand) int64 { return 1 + int64(m*math.Exp(sigma*r.NormFloat64())) }
}

// exact is what was written of one family: its keys, and per window its keys and total.
type exact struct {
	Keys    int64
	Windows map[string]*winExact // by window name
}

type winExact struct {
	Keys, Total int64
}

func (e *exact) add(o *exact) {
	e.Keys += o.Keys
	for name, w := range o.Windows {
		if e.Windows[name] == nil {
			e.Windows[name] = &winExact{}
		}
		e.Windows[name].Keys += w.Keys
		e.Windows[name].Total += w.Total
	}
}

// generate emits worker's share of family sf's keys (tuples worker, worker+workers, ...), about
// quota of them, each with its value and expiry, and returns what it wrote.
func (sf *scaleFam) generate(worker, workers int, quota int64, seed uint64, emit func(key string, value, expireAt int64) error) (*exact, error) {
	r := rand.New(rand.NewPCG(seed, uint64(worker)))
	ex := &exact{Windows: map[string]*winExact{}}
	for _, w := range sf.windows {
		ex.Windows[w.name] = &winExact{}
	}
	for t := worker; ex.Keys < quota; t += workers {
		dims := sf.dims(t)
		for _, w := range sf.windows {
			if r.Float64() >= sf.present {
				continue
			}
			key, err := sf.fam.Key(w.w, dims)
			if err != nil {
				return nil, err
			}
			v := sf.value(r)
			if err := emit(key, v, w.expireAt); err != nil {
				return nil, err
			}
			ex.Keys++
			we := ex.Windows[w.name]
			we.Keys++
			we.Total += v
		}
	}
	return ex, nil
}
