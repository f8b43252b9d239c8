package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// retrying is how a one-shot command's sweep rides out faults that pass: each is shown on stderr
// with the wait before the next try, and the command gives up once no page has got through for
// scanner.DefaultGiveUp.
func retrying(stderr io.Writer, command, label string) *scanner.Retry {
	return &scanner.Retry{Report: func(err error, wait time.Duration) { showFault(stderr, command, label, err, wait) }}
}

// showFault is the line a fault that may pass shows while it lasts.
func showFault(stderr io.Writer, command, label string, err error, wait time.Duration) {
	fmt.Fprintf(stderr, "hourglass: %s: %s: %v; trying again in %v (giving up after %v without a reply)\n",
		command, label, err, wait.Round(10*time.Millisecond), scanner.DefaultGiveUp)
}

// faultWait paces a polling command (discover) through faults that pass, as retrying does for a
// sweep: each is shown on stderr with the wait, and the command gives up once nothing has got
// through for scanner.DefaultGiveUp. A permanent fault ends it at once.
type faultWait struct {
	stderr         io.Writer
	command, label string
	last           time.Time     // when a poll last got through, or the command began
	backoff        time.Duration // the next wait
}

func newFaultWait(stderr io.Writer, command, label string) *faultWait {
	return &faultWait{stderr: stderr, command: command, label: label, last: time.Now()}
}

// ok notes a poll that got through.
func (f *faultWait) ok() { f.last, f.backoff = time.Now(), 0 }

// after waits out err when it may pass and reports true to try again; it reports false when err
// is permanent, has lasted past the give-up, or ctx ended.
func (f *faultWait) after(ctx context.Context, err error) bool {
	if store.ClassOf(err) != store.ClassTransient || ctx.Err() != nil || time.Since(f.last) >= scanner.DefaultGiveUp {
		return false
	}
	f.backoff = min(max(2*f.backoff, 250*time.Millisecond), 4*time.Second)
	d := min(f.backoff, scanner.DefaultGiveUp-time.Since(f.last))
	showFault(f.stderr, f.command, f.label, err, d)
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}
