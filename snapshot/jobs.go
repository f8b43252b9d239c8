package snapshot

import "time"

// JobThroughput is what a job library counts of the jobs it ran, for one queue or for all: its
// running totals, how fast they grow now, and its daily counts. A figure the library does not
// keep is null, never 0.
type JobThroughput struct {
	Queue    string `json:"queue"` // escaped; "" when the library counts all its queues together
	RawQueue string `json:"-"`     // the queue's own name
	// ProcessedTotal counts the jobs run, failed or not; FailedTotal those that failed: the
	// library's own running totals.
	ProcessedTotal *int64 `json:"processed_total"`
	FailedTotal    *int64 `json:"failed_total"`
	// ProcessedPerSec and FailedPerSec are the totals' growth a second, the slope of the last
	// minute of reads (a watcher's; a one-off snapshot has none); null while not known, RateNote
	// says why.
	ProcessedPerSec *float64 `json:"processed_per_sec"`
	FailedPerSec    *float64 `json:"failed_per_sec"`
	RateNote        string   `json:"rate_note,omitempty"`
	// RateMeasuring is set while a watcher measures a rate null here: it reads the totals, but
	// its reads span too little yet. A front end then says "measuring", never "?" (unreadable).
	RateMeasuring *Measuring `json:"rate_measuring,omitempty"`
	// Days are the library's daily counts by UTC day, newest (today) first; empty where it keeps
	// none.
	Days []JobDay `json:"days"`
	Note string   `json:"note,omitempty"` // what the library does not keep here
	// Error is why this row's counts could not be read (a key of it holds what the library never
	// writes there): its figures are then unknown, not absent; the other rows keep theirs.
	Error string `json:"error,omitempty"`
}

// Measuring is a rate being measured: its reads span SpanSec so far, and a rate needs NeedSec.
type Measuring struct {
	SpanSec float64 `json:"span_sec"`
	NeedSec float64 `json:"need_sec"`
}

// JobDay is one UTC day of a library's daily counts.
type JobDay struct {
	Day       string `json:"day"` // 2006-01-02
	Processed int64  `json:"processed"`
	Failed    int64  `json:"failed"`
	// From is when the day's counts begin where the library kept only part of it; null for a
	// whole day.
	From *time.Time `json:"from,omitempty"`
}

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
	// StartedAgeMS is how long ago it started. LastBeatAgeMS is how long ago it last beat (null:
	// the library records no beat time). ExpiresInMS is the time until the library takes it for
	// gone (negative: past; null: never, as for BullMQ). IdleMS is BullMQ's connection idle time.
	StartedAgeMS  *int64 `json:"started_age_ms"`
	LastBeatAgeMS *int64 `json:"last_beat_age_ms"`
	ExpiresInMS   *int64 `json:"expires_in_ms"`
	IdleMS        *int64 `json:"idle_ms"`
	Done          *int64 `json:"done"`   // RQ's successful job count
	Failed        *int64 `json:"failed"` // RQ's failed job count
	Stale         bool   `json:"stale"`
	StaleWhy      string `json:"stale_why,omitempty"`
}

// More counts the processes the library lists past those the snapshot holds.
func (w *JobWorkers) More() int64 {
	if w.Found == nil {
		return 0
	}
	return max(*w.Found-int64(len(w.List)), 0)
}
