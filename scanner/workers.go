package scanner

import (
	"time"

	"github.com/hourglass-dev/hourglass/store/jobs"
)

// JobWorkers are a job library's live processes as the library records them in Redis, read at
// the sweep's end (jobs.Source.Workers).
type JobWorkers struct {
	// Found counts the processes the library lists; above len(List) when there were more than
	// a snapshot reports. Found and Live are null when the library records no processes in
	// Redis (Celery), Stale when it records no beat to miss (BullMQ).
	Found *int64      `json:"found"`
	Live  *int64      `json:"live"`  // of List, those not stale
	Stale *int64      `json:"stale"` // of List, those stale
	List  []JobWorker `json:"list"`  // by identity
	// Notes say what the library does not record (Celery records no workers in Redis; BullMQ no
	// heartbeat).
	Notes []string `json:"notes"`
	Error string   `json:"error,omitempty"`
}

// JobWorker is one process. A figure the library does not record is null, never 0; ages are
// against the server's clock at the sweep's end.
type JobWorker struct {
	Identity    string   `json:"identity"` // escaped: Sidekiq's identity, RQ's name, asynq's host:pid:id, BullMQ's client name
	Host        string   `json:"host"`     // escaped (BullMQ: the connection's address)
	PID         *int64   `json:"pid"`
	Queues      []string `json:"queues"` // escaped
	Busy        *int64   `json:"busy"`
	Concurrency *int64   `json:"concurrency"`
	State       string   `json:"state"`                 // the library's word, escaped
	CurrentJob  string   `json:"current_job,omitempty"` // RQ, escaped
	// StartedAgeMS is how long ago it started; LastBeatAgeMS how long ago it last beat (null:
	// the library records no beat time); ExpiresInMS until the library takes it for gone
	// (negative: past; null: never, as for BullMQ); IdleMS BullMQ's connection idle time.
	StartedAgeMS  *int64 `json:"started_age_ms"`
	LastBeatAgeMS *int64 `json:"last_beat_age_ms"`
	ExpiresInMS   *int64 `json:"expires_in_ms"`
	IdleMS        *int64 `json:"idle_ms"`
	Done          *int64 `json:"done"`   // RQ's successful job count
	Failed        *int64 `json:"failed"` // RQ's failed job count
	Stale         bool   `json:"stale"`
	StaleWhy      string `json:"stale_why,omitempty"`
}

// jobWorkersOf renders what the sweep's last step read of a library's processes, at now.
func jobWorkersOf(ws jobs.Workers, err error, now time.Time) *JobWorkers {
	out := &JobWorkers{List: []JobWorker{}, Notes: ws.Notes}
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
		j := JobWorker{Identity: Escape(w.Identity), Host: Escape(w.Host), PID: kept(w.PID), Queues: []string{},
			Busy: kept(w.Busy), Concurrency: kept(w.Concurrency), State: Escape(w.State), CurrentJob: Escape(w.CurrentJob),
			StartedAgeMS: age(w.Started), LastBeatAgeMS: age(w.LastBeat), Done: kept(w.Done), Failed: kept(w.Failed),
			Stale: w.Stale, StaleWhy: w.StaleWhy}
		for _, q := range w.Queues {
			j.Queues = append(j.Queues, Escape(q))
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

// More counts the processes the library lists past those the snapshot holds.
func (w *JobWorkers) More() int64 {
	if w.Found == nil {
		return 0
	}
	return max(*w.Found-int64(len(w.List)), 0)
}
