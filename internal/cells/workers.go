package cells

import (
	"strconv"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// WorkerColumns are the titles of Worker's cells, in order.
var WorkerColumns = []string{"PROCESS", "HEALTH", "BUSY", "STATE", "LAST BEAT", "EXPIRES", "HOST:PID", "QUEUES", "STARTED"}

// Stale is the HEALTH cell of a stale process; a live one's is "live".
const Stale = "STALE"

// Worker is one job library process's cells (WorkerColumns). They are busy/concurrency, and the
// library's state with RQ's current job or BullMQ's idle time. Then come how long ago it last beat,
// the time until it expires ("3s ago" once past), and how long ago it started. "—" is where the
// library records no such figure.
func Worker(w snapshot.JobWorker) []string {
	health := "live"
	if w.Stale {
		health = Stale
	}
	busy := format.NotKept
	if w.Busy != nil || w.Concurrency != nil {
		busy = format.CommasOf(w.Busy, format.NotKept) + "/" + format.CommasOf(w.Concurrency, format.NotKept)
	}
	state := w.State
	if w.CurrentJob != "" {
		state += " " + w.CurrentJob
	}
	if w.IdleMS != nil {
		state += ", idle " + format.Millis(*w.IdleMS)
	}
	expires := format.NotKept
	if e := w.ExpiresInMS; e != nil && *e >= 0 {
		expires = "in " + format.Millis(*e)
	} else if e != nil {
		expires = format.Millis(-*e) + " ago"
	}
	host := w.Host
	if w.PID != nil {
		host += ":" + strconv.FormatInt(*w.PID, 10)
	}
	return []string{w.Identity, health, busy, state, format.MillisOf(w.LastBeatAgeMS, format.NotKept), expires,
		host, strings.Join(w.Queues, ","), format.MillisOf(w.StartedAgeMS, format.NotKept)}
}
