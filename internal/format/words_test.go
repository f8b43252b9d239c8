package format

import "testing"

func TestCountAgrees(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 families"}, {1, "1 family"}, {2, "2 families"}, {1204, "1,204 families"}, {-1, "-1 families"}} {
		if got := Count(c.n, "family", "families"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Plural(1, "key", "keys"); got != "key" {
		t.Errorf("Plural(1) = %q, want key", got)
	}
	if got := Count(len([]int{7}), "entry", "entries"); got != "1 entry" {
		t.Errorf("Count of an int = %q, want 1 entry", got)
	}
}

func TestMeasuring(t *testing.T) {
	for _, c := range []struct {
		span, need float64
		want       string
	}{
		{0, 20, "measuring, 20s to go"},
		{12.2, 20, "measuring, 8s to go"}, // 7.8s left, rounded up
		{19.5, 20, "measuring, 1s to go"},
		{20, 20, "measuring"}, // spans enough: the next read gives the rate
		{0, 90, "measuring, 1m30s to go"},
	} {
		if got := Measuring(c.span, c.need); got != c.want {
			t.Errorf("Measuring(%v, %v) = %q, want %q", c.span, c.need, got, c.want)
		}
	}
}
