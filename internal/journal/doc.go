// Package journal keeps what undoes the console's bulk actions. It is an append-only file under the
// user's state directory, one JSON line per event: $XDG_STATE_HOME/hourglass/journal.jsonl, else
// ~/.local/state/hourglass/journal.jsonl. Each action's lines are written and fsynced before the
// chunk they undo runs, so the file always holds at least what was done. Its size is bounded
// (DefaultLimit). A new action first drops the oldest whole actions. A chunk that would take the
// file past the bound is refused, which stops the action before that chunk. `hourglass undo` and
// the console's `z` read the last action on a target from it.
//
// Of hourglass's packages it imports store/jobs (the undo data is jobs.UndoTask); it does no Redis
// I/O.
package journal
