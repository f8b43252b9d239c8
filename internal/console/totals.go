package console

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/store"
)

// PrintTotals prints, once a second, each family's current hour and day totals over the demo's
// dims, read from Redis in one pipeline per family and window, and the hour's rate.
func PrintTotals(ctx context.Context, st *store.Store, d *traffic.Demo, out io.Writer) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	prev := map[string]hourTotal{}
	prevAt := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			rctx, cancel := context.WithTimeout(ctx, 900*time.Millisecond)
			var parts []string
			for _, gen := range d.Generators() {
				part, err := familyTotals(rctx, st, gen, prev, now.Sub(prevAt))
				if err != nil {
					part = gen.Family().Name() + " " + format.OneLine(err)
				}
				parts = append(parts, part)
			}
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			prevAt = now
			fmt.Fprintf(out, "%s  %s\n", st.Now().In(st.Location()).Format("15:04:05"), strings.Join(parts, "  |  "))
		}
	}
}

// hourTotal is a family's total in one hour window, kept to compute the rate.
type hourTotal struct {
	window time.Time
	total  int64
}

// familyTotals formats one family's totals and updates prev[family] with its hour total. Hour and
// day are read in one pipeline, so they agree with each other.
func familyTotals(ctx context.Context, st *store.Store, gen *traffic.Generator, prev map[string]hourTotal, dt time.Duration) (string, error) {
	f := gen.Family()
	byGran, err := st.GetWindows(ctx, f, gen.Tuples(), time.Time{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(f.Name())
	for _, g := range f.Granularities() {
		vals := byGran[g]
		var total int64
		for _, v := range vals {
			total += v.Value
		}
		label := "hour"
		if g == store.Day {
			label = "today"
		}
		fmt.Fprintf(&b, " %s %s", label, format.Commas(total))
		if g == store.Hour {
			last, ok := prev[f.Name()]
			if ok && last.window.Equal(vals[0].Window.Start) && dt > 0 {
				fmt.Fprintf(&b, " (+%s/s)", format.Commas(int64(math.Round(float64(total-last.total)/dt.Seconds()))))
			}
			prev[f.Name()] = hourTotal{vals[0].Window.Start, total}
		}
	}
	return b.String(), nil
}
