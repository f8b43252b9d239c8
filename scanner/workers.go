package scanner

import (
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// jobWorkersOf renders what the sweep's last step read of a library's processes, at now.
func jobWorkersOf(ws jobs.Workers, err error, now time.Time) *snapshot.JobWorkers {
	out := &snapshot.JobWorkers{List: []snapshot.JobWorker{}, Notes: ws.Notes}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	kept := func(n int64) *int64 {
		if n == jobs.Absent {
			return nil
		}
		return &n
	}
	ms := func(d time.Duration) *int64 { n := d.Milliseconds(); return &n }
	age := func(at time.Time) *int64 {
		if at.IsZero() {
			return nil
		}
		return ms(now.Sub(at))
	}
	var live, stale int64
	for _, w := range ws.List {
		j := snapshot.JobWorker{Identity: format.Escape(w.Identity), Host: format.Escape(w.Host), PID: kept(w.PID), Queues: []string{},
			Busy: kept(w.Busy), Concurrency: kept(w.Concurrency), State: format.Escape(w.State), CurrentJob: format.Escape(w.CurrentJob),
			StartedAgeMS: age(w.Started), LastBeatAgeMS: age(w.LastBeat), Done: kept(w.Done), Failed: kept(w.Failed),
			Stale: w.Stale, StaleWhy: w.StaleWhy}
		for _, q := range w.Queues {
			j.Queues = append(j.Queues, format.Escape(q))
		}
		if !w.Expires.IsZero() {
			j.ExpiresInMS = ms(w.Expires.Sub(now))
		}
		if w.Idle >= 0 {
			j.IdleMS = ms(w.Idle)
		}
		if w.Stale {
			stale++
		} else {
			live++
		}
		out.List = append(out.List, j)
	}
	if ws.Kept {
		out.Found, out.Live = &ws.Found, &live
	}
	if ws.Beats {
		out.Stale = &stale
	}
	return out
}
