// Package inspect is the console's drill-down past the Snapshot: on demand, one structure at a
// time, it reads a dims tuple's retained windows, a page of a queue's tasks, a limiter key or a
// lock, and does the per-task and per-key writes (a task run now, returned or deleted; one
// counter key repaired; a stale lock released), each through the store's scripts and only on
// what the watched entries cover or a Snapshot's queue row opens. It also writes the redis-cli
// command that reads a key.
//
// It reads within the budget of the Watcher (internal/watch), through the few accessors the Watcher
// gives it (its client, its budget, its entries, the server's clock); the Watcher itself keeps
// polling and claiming. Its bulk actions on a queue's section record what undoes each chunk in the
// journal before the chunk runs, and it undoes the last one (UndoLast, which `hourglass undo`
// uses too). Of hourglass's packages it imports internal/format, internal/journal,
// internal/watch, scanner, snapshot, store, store/jobs and store/limits (and it uses
// go-redis); the tui reaches it only through its Inspector and KeyActions interfaces.
package inspect
