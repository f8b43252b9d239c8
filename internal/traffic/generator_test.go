package traffic

import (
	"fmt"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/config"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

func TestTrafficIsZipfAndStable(t *testing.T) {
	f, _ := config.Builtin(redistest.Shipped(t)).Counter("flow")
	a, b := NewGenerator(f, 100, 1), NewGenerator(f, 100, 1)
	counts := map[string]int{}
	for range 10000 {
		x, y := a.Next(), b.Next()
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Fatal("the same seed drew different tuples")
		}
		counts[fmt.Sprint(x)]++
	}
	if hot := counts[fmt.Sprint(a.Tuples()[0])]; hot < 1000 {
		t.Errorf("the hottest tuple got %d of 10000 events; Zipf should give it far more than 1/100", hot)
	}
	if got := a.Tuples()[3]; got[2] != "10.0.0.3" || got[1] != "dev000003" {
		t.Errorf("tuple 3 = %v", got)
	}
}
