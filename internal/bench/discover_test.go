package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestDiscoverCase runs the discover case on a small keyspace and checks what it reports: the
// keyspace's groups, every figure filled in, and the table's rows. Its speeds are not checked.
func TestDiscoverCase(t *testing.T) {
	b := testBencher(t, redistest.Start(t), io.Discard)
	const n = 20_000
	d, err := b.discoverCase(n)
	if err != nil {
		t.Fatal(err)
	}
	// The groups of the keyspace, and a few of the counter keys (the families' windows).
	counted := func(groups, want int) bool { return groups >= want && groups <= want+4 }
	if d.Keys != n || !counted(d.Groups, discoverGroups) {
		t.Errorf("%d keys in %d groups; want %d in %d and a few of counters", d.Keys, d.Groups, n, discoverGroups)
	}
	want := []DiscoverHeap{{Keys: n / 10, Groups: discoverGroups}, {Keys: n, Groups: discoverGroups}, {Keys: n, Groups: 10 * discoverGroups}}
	if len(d.Heap) != len(want) {
		t.Fatalf("heap figures %+v", d.Heap)
	}
	for i, h := range d.Heap {
		if h.Keys != want[i].Keys || !counted(h.Groups, want[i].Groups) {
			t.Errorf("heap figure %d is of %d keys in %d groups; want %d in %d and a few", i, h.Keys, h.Groups, want[i].Keys, want[i].Groups)
		}
	}
	for name, v := range map[string]float64{"sweep": d.Sweep, "discover": d.Discover, "raw scan": d.RawScan,
		"budgeted": d.Budgeted, "budget tolerance": d.BudgetTolerance, "heap a group": d.HeapPerGroup} {
		if v <= 0 {
			t.Errorf("%s is %v", name, v)
		}
	}
	if d.Budget != n/10/2 {
		t.Errorf("budget %d keys/s", d.Budget)
	}
	var out bytes.Buffer
	writeDiscover(&out, d, d.Sweep/d.Discover)
	for _, row := range []string{"DISCOVER: 20,000 KEYS", "no config ÷ config (time)", "held to a budget of 1,000 keys/s",
		"Go heap the sweep holds: 20,000 keys, 1,00", "a group adds"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("the table has no %q:\n%s", row, out.String())
		}
	}
}
