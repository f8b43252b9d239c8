package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// pipelines records the commands of every pipeline a client sends, by their arguments.
type pipelines struct {
	mu   sync.Mutex
	sent [][][]any
}

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.mu.Lock()
		var args [][]any
		for _, c := range cmds {
			if !handshake[store.CommandStatName(c.Args())] { // a new connection's, not the case's
				args = append(args, c.Args())
			}
		}
		if len(args) > 0 {
			p.sent = append(p.sent, args)
		}
		p.mu.Unlock()
		return next(ctx, cmds)
	}
}

// TestReadFloorPass: the read floor reads every key once, a PTTL each and an MGET a chunk of at
// most 100 keys after that chunk's PTTLs, each page right after its SCAN at the COUNT given, and
// sends nothing else; its server time is SCAN's, PTTL's and MGET's alone.
func TestReadFloorPass(t *testing.T) {
	srv := redistest.Start(t)
	b := testBencher(t, srv, io.Discard)
	const n, count = 2345, 250
	pipe := b.rdb.Pipeline()
	for i := range n {
		pipe.Set(b.ctx, fmt.Sprintf("k%d", i), i, time.Hour)
	}
	if _, err := pipe.Exec(b.ctx); err != nil {
		t.Fatal(err)
	}
	rec := &pipelines{}
	b.rdb.AddHook(rec)
	mk := b.meter.start(b.ctx)
	before, err := readCommandStats(b.ctx, b.meter.stats)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := b.readFloorPass(count)
	if err != nil {
		t.Fatal(err)
	}
	st := b.meter.since(b.ctx, mk, float64(seen), "key", nil)
	after, err := readCommandStats(b.ctx, b.meter.stats)
	if err != nil {
		t.Fatal(err)
	}
	if st == nil || !slices.Equal(slices.Sorted(maps.Keys(st.ByCommand)), []string{"mget", "pttl", "scan"}) {
		t.Fatalf("the read floor's server time is of %v; want SCAN's, PTTL's and MGET's", st)
	}
	// Every key read once: a PTTL each, in an MGET after its chunk's PTTLs.
	read := map[string]int{}
	for _, p := range rec.sent {
		read = checkFloorPipeline(t, p, read)
	}
	if len(read) != n || seen < n {
		t.Errorf("%d distinct keys read of %d, %d seen", len(read), n, seen)
	}
	pttls := after["pttl"].Calls - before["pttl"].Calls
	scans := after["scan"].Calls - before["scan"].Calls
	if pttls != int64(seen) || scans < n/count || int64(len(rec.sent)) > scans {
		t.Errorf("%d PTTLs for %d keys seen, %d SCANs, %d pipelines", pttls, seen, scans, len(rec.sent))
	}
}

// checkFloorPipeline checks one pipeline of the read floor: chunks of at most 100 PTTLs, each
// followed by an MGET of the same keys in the same order. It adds the keys read to read.
func checkFloorPipeline(t *testing.T, p [][]any, read map[string]int) map[string]int {
	t.Helper()
	var chunk []any
	for _, args := range p {
		switch args[0] {
		case "pttl":
			chunk = append(chunk, args[1])
		case "mget":
			if !slices.Equal(args[1:], chunk) || len(chunk) > readFloorChunk {
				t.Fatalf("MGET %v after the PTTLs of %v", args[1:], chunk)
			}
			for _, k := range chunk {
				read[k.(string)]++
			}
			chunk = nil
		default:
			t.Fatalf("the read floor's pipeline holds %v", args)
		}
	}
	if len(chunk) > 0 {
		t.Fatalf("PTTLs of %v with no MGET after them", chunk)
	}
	return read
}

// TestSweepPassesFile: the passes' read floor figures are their min, median and max, and the
// time by command is each command's over all passes' keys, worked out by hand.
func TestSweepPassesFile(t *testing.T) {
	p := sweepPasses{
		sweeps: []float64{10, 30, 20}, raws: []float64{20, 40, 30}, ratios: []float64{0.5, 0.75, 2.0 / 3},
		sweepUs: []float64{2, 2.4, 2.2}, rawUs: []float64{1, 1.1, 1.2}, floorUs: []float64{1.8, 2, 1.6},
		floorRatios: []float64{1.1, 1.3, 1.2},
		sweepTime:   &ServerTime{Units: 400, ByCommand: map[string]float64{"scan": 400, "pttl": 300, "mget": 140}},
		floorTime:   &ServerTime{Units: 400, ByCommand: map[string]float64{"scan": 380, "pttl": 160, "mget": 130}},
	}
	rep := &Report{}
	p.file(rep, 3)
	f := rep.ReadFloorFigures
	for _, c := range []struct {
		name string
		got  *float64
		want float64
	}{
		{"floor min", f.ReadFloorUsMin, 1.6}, {"floor median", f.ReadFloorUs, 1.8}, {"floor max", f.ReadFloorUsMax, 2},
		{"ratio min", f.SweepVsReadFloorMin, 1.1}, {"ratio median", f.SweepVsReadFloor, 1.2}, {"ratio max", f.SweepVsReadFloorMax, 1.3},
	} {
		if c.got == nil || !near(*c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, show(c.got), c.want)
		}
	}
	wantSweep := map[string]float64{"scan": 1, "pttl": 0.75, "mget": 0.35}
	wantFloor := map[string]float64{"scan": 0.95, "pttl": 0.4, "mget": 0.325}
	if !maps.EqualFunc(f.SweepByCommand, wantSweep, near) || !maps.EqualFunc(f.ReadFloorByCommand, wantFloor, near) {
		t.Errorf("by command: sweep %v, read floor %v; want %v and %v", f.SweepByCommand, f.ReadFloorByCommand, wantSweep, wantFloor)
	}
	// Where the sweep's time above the floor goes, most first.
	rest := commandRest(f.SweepByCommand, f.ReadFloorByCommand)
	if len(rest) != 3 || rest[0].name != "pttl" || !near(rest[0].us, 0.35) || rest[1].name != "scan" || !near(rest[1].us, 0.05) ||
		rest[2].name != "mget" || !near(rest[2].us, 0.025) {
		t.Errorf("sweep less read floor: %v", rest)
	}
	// A pass whose floor's time is unknown leaves the goal's ratio unknown.
	p.floorRatios = p.floorRatios[:2]
	rep = &Report{}
	p.file(rep, 3)
	if rep.SweepVsReadFloor != nil {
		t.Errorf("2 ratios of 3 passes gave %v; want unknown", *rep.SweepVsReadFloor)
	}
}

// TestCommandRest: a command only one side sent counts as all added (or all spared), and the
// table leaves out what rounds to 0.00.
func TestCommandRest(t *testing.T) {
	rest := commandRest(map[string]float64{"scan": 1, "type": 0.2, "info": 0.001}, map[string]float64{"scan": 0.9, "mget": 0.3})
	want := []commandTime{{"type", 0.2}, {"scan", 0.1}, {"info", 0.001}, {"mget", -0.3}}
	if len(rest) != len(want) {
		t.Fatalf("rest %v, want %v", rest, want)
	}
	for i := range want {
		if rest[i].name != want[i].name || !near(rest[i].us, want[i].us) {
			t.Fatalf("rest %v, want %v", rest, want)
		}
	}
	if got := commandCells(rest, true); got != "type +0.20, scan +0.10, mget -0.30 µs" {
		t.Errorf("signed cells %q", got)
	}
	if got := commandCells(byCommand(map[string]float64{"scan": 0.95, "pttl": 0.4}), false); got != "scan 0.95, pttl 0.40 µs" {
		t.Errorf("cells %q", got)
	}
	if commandRest(nil, map[string]float64{}) != nil {
		t.Error("a rest from an unknown sweep")
	}
}
