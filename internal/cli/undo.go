package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/inspect"
	"github.com/hourglass-dev/hourglass/internal/journal"
)

const undoUsage = `hourglass undo: undo the last bulk action done on a Redis from the console.

The console's bulk actions (N, X and K on a queue's section: run or retry all, delete all,
archive or kill all) record what undoes each chunk in a journal before the chunk runs: each
task's member with its score and the set it was in, for a job moved to its queue the job
exactly as pushed, and for a deleted key its DUMP. undo reads the newest action on the target
the flags name that is not undone yet (run again, it undoes the one before), puts every task back as it was (a moved
job leaves its queue and returns to its set, only if no worker has taken it since), each
checked against what is there now, in chunks at the [scan] budget, and says what it restored.
An action stopped by ctrl+c is undone as far as it went. The console's z does the same.

The journal is $XDG_STATE_HOME/hourglass/journal.jsonl (else
~/.local/state/hourglass/journal.jsonl), at most 256 MiB: each new action drops the oldest.
A real Redis needs --allow-writes.

Usage:
  hourglass undo --addr ADDR --allow-writes [flags]

Flags:
`

func cmdUndo(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("undo", undoUsage, shipped, stdout)
	tf.withBudget(fs)
	tf.writes = func(*config.Config) bool { return true }
	cfg, t, err := tf.parseOpen(ctx, args, stderr, func(cfg *config.Config) error {
		if !cfg.Redis.Real() {
			return config.Usagef("undo needs --addr: the embedded Redis is new each run, with nothing to undo")
		}
		return cfg.RequireWrites("undo")
	})
	if err != nil {
		return err
	}
	defer t.Close()
	j, err := journal.Open("", 0)
	if err != nil {
		return fmt.Errorf("undo: %w", err)
	}
	line, err := inspect.UndoLast(ctx, t.RDB, j, t.Label, inspect.Pacer(cfg.Scan.KeysPerSecond, nil), nil)
	switch {
	case errors.Is(err, journal.ErrNothing):
		return fmt.Errorf("undo: the journal %s holds no bulk action on %s that is not undone", j.Path, t.Label)
	case err != nil:
		return fmt.Errorf("undo: %s: %w", t.Label, err)
	}
	fmt.Fprintln(stdout, line)
	return nil
}
