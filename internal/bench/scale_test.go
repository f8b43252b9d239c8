package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestScale runs bench --scale's code on a small scale (200,000 keys on one server, 150,000 on a
// 3-master cluster): the keyspaces written as planned, the console polled, the estimates at each
// coverage set beside the exact figures, the 50 trials run and their hit rate computed, most
// intervals holding the exact value, and a known rate injected while the console polls on, its
// polls' live rates set beside the writer's count. It holds nothing to a speed nor to the live
// rate's accuracy.
func TestScale(t *testing.T) {
	redistest.Binary(t)
	redistest.ClearOfHourEnd(t, 3*time.Minute) // the live rate is measured in the hour the keys were written in
	var log bytes.Buffer
	// At the shipped max_redis_time a console reads about 900 keys a second, which in this test's
	// seconds gives the 53 families' live reads and first figures no sure turn; keys_per_second
	// alone paces it here, so the code paths run whatever the machine's load.
	def := config.Builtin(redistest.Shipped(t))
	def.Scan.MaxRedisTime = 0
	rep, err := RunScale(t.Context(), ScaleOptions{Keys: 200_000, ClusterKeys: 150_000, ConsoleFor: 2 * time.Second,
		LiveFor: 4 * time.Second, Defaults: def, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rep.Servers) != 2 || rep.Servers[0].Kind != "server" || rep.Servers[1].Kind != "cluster" || rep.Servers[1].Masters != 3 {
		t.Fatalf("servers %+v", rep.Servers)
	}
	for i, want := range []int64{200_000, 150_000} {
		sv := rep.Servers[i]
		// Each worker writes whole tuples until it has its quota: a few keys past it at most.
		if sv.Keys < want*99/100 || sv.Keys > want*101/100 || sv.LoadSeconds <= 0 || sv.UsedMemory <= 0 {
			t.Errorf("%s: %d keys (want about %d), loaded in %v s, %d bytes", sv.Kind, sv.Keys, want, sv.LoadSeconds, sv.UsedMemory)
		}
		checkScaleConsole(t, sv)
		checkScaleLive(t, sv, 4*time.Second)
		checkCoverage(t, sv)
	}
	// The hit rate's goal may be unknown here: on 20,000 keys a master, 1% and 5% are too few
	// pages for an interval.
	if rep.Goals.FirstFigures == nil && rep.Servers[0].Console.FirstFigures != nil || rep.Goals.TotalsAt5 == nil || rep.Goals.ConsoleCPU == nil {
		t.Errorf("goals unknown: %+v", rep.Goals)
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	WriteScaleTable(&table, rep)
	t.Log("\n" + table.String())
	for _, row := range []string{"ONE SERVER: ", "A 3-MASTER CLUSTER: ", "pv", "current hour's total", "hash-tagged", "SCALE GOAL",
		"live rate: 5,000 events/s asked into the ", "live rate, median of its polls"} {
		if !strings.Contains(table.String(), row) {
			t.Errorf("the table has no %q:\n%s", row, table.String())
		}
	}
	checkScaleDocumented(t, out)
}

// checkScaleConsole checks the console polled and its CPU and server time were read.
func checkScaleConsole(t *testing.T, sv ScaleServer) {
	t.Helper()
	c := sv.Console
	if c.Polls == 0 || c.KeysSwept <= 0 || c.ServerTime == nil || *c.ServerTime <= 0 || c.CPU < 0 || len(c.ByCommand) == 0 {
		t.Errorf("%s: console %+v", sv.Kind, c)
	}
	if c.FirstFigures != nil && c.AllFigures != nil && *c.AllFigures < *c.FirstFigures {
		t.Errorf("%s: every family's figures at %v s, before the main ones' at %v s", sv.Kind, *c.AllFigures, *c.FirstFigures)
	}
}

// checkScaleLive checks the live rate was measured: every key of pv's current hour written into,
// the writer's events counted over the span (no more than it was asked for), the polls of the
// span read, each figure within its bounds, and every family written into counted as a trial.
func checkScaleLive(t *testing.T, sv ScaleServer, liveFor time.Duration) {
	t.Helper()
	lr := sv.LiveRate
	if lr == nil {
		t.Errorf("%s: no live rate: %s", sv.Kind, sv.LiveRateUnknown)
		return
	}
	if sv.LiveRateUnknown != "" || lr.Family != "pv" || lr.Keys <= 0 || int64(lr.Keys) != lr.WindowKeys || lr.AskedPerSec != defaultLiveRate {
		t.Errorf("%s: live rate %+v, unknown %q", sv.Kind, lr, sv.LiveRateUnknown)
	}
	asked := lr.AskedPerSec * (lr.WarmupSeconds + lr.Seconds + 1)
	if lr.Seconds < liveFor.Seconds() || lr.Events <= 0 || float64(lr.Events) > asked || lr.TruePerSec <= 0 ||
		math.Abs(lr.TruePerSec*lr.Seconds-float64(lr.Events)) > 1 {
		t.Errorf("%s: the writer's count: %d events over %.1f s, %.0f/s (asked %.0f/s)", sv.Kind, lr.Events, lr.Seconds, lr.TruePerSec, lr.AskedPerSec)
	}
	if lr.Polls == 0 || lr.WithRate > lr.Polls || lr.Inside > lr.WithRate || lr.KeysRead <= 0 {
		t.Errorf("%s: polls %d, with a rate %d, inside %d, keys read %d", sv.Kind, lr.Polls, lr.WithRate, lr.Inside, lr.KeysRead)
	}
	if lr.WithRate > 0 && (lr.MedianPerSec == nil || *lr.MinPerSec > *lr.MedianPerSec || *lr.MedianPerSec > *lr.MaxPerSec ||
		lr.RelError == nil || lr.HitRate == nil || lr.SpanSeconds <= 0) {
		t.Errorf("%s: %d polls with a rate, and %+v", sv.Kind, lr.WithRate, lr)
	}
	if lr.WithTotal > lr.Polls || lr.TotalInside > lr.WithTotal || (lr.WithTotal > 0) != (lr.TotalHitRate != nil) {
		t.Errorf("%s: %d polls with a total, %d inside, hit rate %v", sv.Kind, lr.WithTotal, lr.TotalInside, lr.TotalHitRate)
	}
	// Every trial family has current-hour keys here, and pv too: each is a trial.
	if tr := lr.Trials; tr.Families != scaleTrials+1 || tr.Rates.Trials != tr.Families || tr.Totals.Trials != tr.Families ||
		tr.Rates.Inside > tr.Rates.WithInterval || tr.Totals.Inside > tr.Totals.WithInterval {
		t.Errorf("%s: trials %+v", sv.Kind, tr)
	}
}

// checkCoverage checks the estimates at each coverage: taken past the share asked for, every
// trial counted, and at 20% nearly every trial with an interval (a trial family's current hour
// is a few dozen keys seen here, which may sit in fewer than five pages), most holding the exact
// value, and the main families' figures near it.
func checkCoverage(t *testing.T, sv ScaleServer) {
	t.Helper()
	if len(sv.Coverage) != len(scaleCoverages) {
		t.Fatalf("%s: %d coverages", sv.Kind, len(sv.Coverage))
	}
	for i, run := range sv.Coverage {
		if run.Target != scaleCoverages[i] || run.Coverage < run.Target || run.Coverage > run.Target+0.1 {
			t.Errorf("%s: coverage %v asked, %v taken", sv.Kind, run.Target, run.Coverage)
		}
		// pv's keys and hour; dc's keys and day; ad's keys, hour and day.
		if len(run.Figures) != 7 {
			t.Errorf("%s at %v: %d main figures: %+v", sv.Kind, run.Target, len(run.Figures), run.Figures)
		}
		// As many stretches as fit in the share swept, unless a master was swept to its end first.
		if want := int(math.Round(scaleSweptTo / run.Target)); run.Windows < 1 || run.Windows > want || sv.Kind == "server" && run.Windows != want {
			t.Errorf("%s at %v: %d stretches, want %d", sv.Kind, run.Target, run.Windows, want)
		}
		for _, st := range []TrialStats{run.Keys, run.Totals} {
			if st.Trials != scaleTrials*run.Windows || st.Inside > st.WithInterval || st.WithInterval > st.Trials {
				t.Errorf("%s at %v: trials %+v", sv.Kind, run.Target, st)
			}
		}
		if run.Tagged.Trials+run.Plain.Trials != 2*scaleTrials*run.Windows {
			t.Errorf("%s at %v: %d tagged and %d plain", sv.Kind, run.Target, run.Tagged.Trials, run.Plain.Trials)
		}
	}
	last := sv.Coverage[len(sv.Coverage)-1]
	for _, st := range []TrialStats{last.Keys, last.Totals} {
		// 95% intervals: 70% or fewer of 50 or more trials holding the truth is past 6 standard
		// deviations.
		if st.WithInterval < st.Trials-5*last.Windows || st.HitRate == nil || *st.HitRate < 0.7 {
			t.Errorf("%s at 20%%: %+v", sv.Kind, st)
		}
	}
	for _, f := range last.Figures {
		if f.High == nil || f.RelError == nil || math.Abs(*f.RelError) > 0.2 {
			t.Errorf("%s at 20%%: %+v", sv.Kind, f)
		}
	}
}

// checkScaleDocumented checks the scale JSON's fields are the ones docs/benchmarks.md tables
// under "Estimates at scale", and that every field never left out is there.
func checkScaleDocumented(t *testing.T, out []byte) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	start, end := bytes.Index(doc, []byte("<!-- scale json fields -->")), bytes.Index(doc, []byte("<!-- /scale json fields -->"))
	if start < 0 || end < start {
		t.Fatal("docs/benchmarks.md has no table of the scale JSON's fields")
	}
	documented := map[string]bool{}
	for _, row := range regexp.MustCompile(`(?m)^\|([^|]*)\|`).FindAllSubmatch(doc[start:end], -1) {
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllSubmatch(row[1], -1) {
			documented[string(m[1])] = true
		}
	}
	fields, always := map[string]bool{}, map[string]bool{}
	jsonFields(reflect.TypeFor[ScaleReport](), "", fields, always)
	for f := range fields {
		if !documented[f] {
			t.Errorf("the scale JSON's %s is not in docs/benchmarks.md", f)
		}
	}
	for f := range documented {
		if !fields[f] {
			t.Errorf("docs/benchmarks.md documents %s, which the scale JSON has not", f)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for f := range always {
		if _, ok := got[f]; !ok && !strings.Contains(f, ".") {
			t.Errorf("the scale JSON has no %s", f)
		}
	}
}
