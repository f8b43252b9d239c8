package tui

import (
	"fmt"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// bigStatus is a snapshot of 50 families holding 10k dims between them (200 top dims each), with
// 48 hours and 30 days of series.
func bigStatus() snapshot.Status {
	snap := &snapshot.Snapshot{TakenAt: clock, Target: "10.0.0.5:6379", Mode: "cluster"}
	for f := range 50 {
		fs := snapshot.FamilyStats{Family: fmt.Sprintf("family_%02d", f), Dims: []string{"app", "ip"},
			Granularities: []string{"hour", "day"}, Keys: 20_000,
			Series: snapshot.Series{Hours: make([]int64, snapshot.SeriesHours), Days: make([]int64, snapshot.SeriesDays)}}
		for i := range fs.Series.Hours {
			fs.Series.Hours[i] = int64(i * 1000)
		}
		for i := range fs.Series.Days {
			fs.Series.Days[i] = int64(i * 24000)
		}
		for _, g := range []string{"hour", "day"} {
			w := snapshot.WindowStats{Granularity: g, Window: "2026112209", Start: clock, Total: 1_000_000, Keys: 10_000, Current: true}
			for d := range 100 {
				w.Top = append(w.Top, snapshot.DimsValue{Dims: map[string]string{"app": fmt.Sprint("app", d), "ip": fmt.Sprint("10.0.0.", d)}, Value: int64(10_000 - d)})
			}
			fs.Windows = append(fs.Windows, w)
		}
		fs.Reconciliation = &snapshot.Reconciliation{Days: 1, Dims: 100, Sampled: 1}
		snap.Counters = append(snap.Counters, fs)
	}
	return snapshot.Status{Snapshot: snap, Server: snapshot.ServerInfo{Version: "7.0.15", Masters: 3}}
}

// BenchmarkRender draws each view of a 160x48 console over 50 families and 10k dims. A frame at
// 60 fps has 16.7 ms.
//
//	go test ./tui -run '^$' -bench Render
func BenchmarkRender(b *testing.B) {
	for v, name := range viewNames {
		b.Run(name, func(b *testing.B) {
			m := newTestModel(b, &fakeSource{status: bigStatus()}, nil, 160, 48)
			poll(b, m)
			m.active = v
			b.ResetTimer()
			for range b.N {
				_ = m.Render()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/frame")
		})
	}
	b.Run("Family", func(b *testing.B) {
		m := newTestModel(b, &fakeSource{status: bigStatus()}, nil, 160, 48)
		poll(b, m)
		press(m, "2", "enter")
		b.ResetTimer()
		for range b.N {
			_ = m.Render()
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/frame")
	})
}
