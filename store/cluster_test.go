package store

import (
	"strconv"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestWriterOnCluster writes through a real 3-master Redis Cluster: a hash-tagged family (hour and
// day keys in one call) and one without a tag (its keys split into calls per slot), with dims
// spread over every master. Every key must hold exactly what was added, whichever node owns it,
// and reads across nodes (Get, Series) must see it.
func TestWriterOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	s := newStore(t, rdb, Options{})
	tagged := adRevenue(t)
	split := mustFamily(t, FamilySpec{
		Name: "split", Pattern: "split:<a>:<window>", HourFormat: "yyyyMMddHH", DayFormat: "yyyyMMdd",
		HourRetention: 48 * time.Hour, DayRetention: 30 * 24 * time.Hour,
	})
	w := s.NewWriter(WriterOptions{KeysPerCall: 8})
	at := s.Now()
	const dims, rounds = 300, 7
	for r := range rounds {
		for i := range dims {
			if err := w.Add(tagged, []string{"c", strconv.Itoa(i)}, int64(r+1), at); err != nil {
				t.Fatal(err)
			}
			if err := w.Add(split, []string{strconv.Itoa(i)}, 1, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatalf("flush %d: %v", r, err)
		}
	}
	want := int64(rounds * (rounds + 1) / 2)
	for _, f := range []*Family{tagged, split} {
		for _, g := range []Granularity{Hour, Day} {
			dimsList := make([][]string, dims)
			for i := range dims {
				dimsList[i] = []string{"c", strconv.Itoa(i)}
				if f == split {
					dimsList[i] = []string{strconv.Itoa(i)}
				}
			}
			vals, err := s.GetMany(t.Context(), f, g, dimsList, at)
			if err != nil {
				t.Fatal(err)
			}
			exp := want // the tagged family added 1, 2, ... rounds; the split one 1 a round
			if f == split {
				exp = rounds
			}
			for _, v := range vals {
				if v.Value != exp {
					t.Fatalf("%s = %d, want %d", v.Key, v.Value, exp)
				}
			}
		}
	}
	// The keys really are spread over the masters.
	perNode := map[string]int{}
	for i := range dims {
		key, _ := tagged.Key(WindowAt(Hour, at, shanghai), []string{"c", strconv.Itoa(i)})
		node, err := rdb.MasterForKey(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		perNode[node.Options().Addr]++
	}
	if len(perNode) != 3 {
		t.Fatalf("keys on %d masters, want 3: %v", len(perNode), perNode)
	}
	series, err := s.Series(t.Context(), tagged, Hour, []string{"c", "7"}, 3, at)
	if err != nil || series[2].Value != want {
		t.Fatalf("series across the cluster: %v, %v", series, err)
	}
	vals, err := s.Incr(t.Context(), tagged, []string{"c", "7"}, 1, at)
	if err != nil || vals[0].Value != want+1 || vals[1].Value != want+1 {
		t.Fatalf("Incr on the cluster: %v, %v", vals, err)
	}
	if _, err := s.Incr(t.Context(), split, []string{"x"}, 1, at); err == nil {
		t.Fatal("Incr of a family whose hour and day keys are in different slots did not refuse")
	}
}

// TestFailoverLosesNoIncrement writes into a 3-master cluster with a replica each while a replica
// takes over its master (CLUSTER FAILOVER): every hour and day total is exactly what was added.
// A coordinated failover pauses the master's clients and go-redis follows the MOVED replies by
// itself, so flushes rarely fail here; resending what failed is proven in faults_test.go.
func TestFailoverLosesNoIncrement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a six-node cluster")
	}
	cl := redistest.StartClusterReplicas(t, 3, 1)
	rdb := cl.Client(t)
	s := newStore(t, rdb, Options{})
	f := adRevenue(t)
	w := s.NewWriter(WriterOptions{})
	at := s.Now()
	const dims = 200
	failedOver := make(chan string, 1)
	// Write round after round: five before the failover starts, while it runs (the master pauses
	// its clients while the replica catches up), and ten more after it.
	rounds, after := 0, -1
	promoted := ""
	for after != 0 {
		for i := range dims {
			if err := w.Add(f, []string{"c", strconv.Itoa(i)}, 1, at); err != nil {
				t.Fatal(err)
			}
		}
		rounds++
		if rounds == 5 {
			go func() { failedOver <- cl.Failover(t) }()
		}
		_, _ = w.Flush(t.Context()) // errors while the slots move: what is unsent stays pending
		select {
		case promoted = <-failedOver:
			after = 10
		default:
		}
		if after > 0 {
			after--
		}
	}
	t.Logf("%d rounds written across the failover to %s", rounds, promoted)
	deadline := time.Now().Add(30 * time.Second)
	for w.Pending() > 0 {
		if _, err := w.Flush(t.Context()); err != nil && time.Now().After(deadline) {
			t.Fatalf("still %d pending after the failover: %v", w.Pending(), err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d pending after the failover", w.Pending())
		}
	}
	for _, g := range []Granularity{Hour, Day} {
		dimsList := make([][]string, dims)
		for i := range dims {
			dimsList[i] = []string{"c", strconv.Itoa(i)}
		}
		vals, err := s.GetMany(t.Context(), f, g, dimsList, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if v.Value != int64(rounds) {
				t.Fatalf("%s = %d after the failover to %s, want %d", v.Key, v.Value, promoted, rounds)
			}
		}
	}
}
