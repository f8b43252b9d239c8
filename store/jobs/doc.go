// Package jobs reads and acts on other programs' job queues in Redis, and on hourglass's own
// delay and list queues as the console sees them: each job library's layout (Sidekiq, BullMQ,
// RQ, Celery, asynq) is one row of the table in libraries.go, with its reader, its pages of
// tasks, its actions on one task, its bulk actions, its workers, its throughput, its pause and
// how its keys are recognised under a prefix its user chose (its marks) in files named after it. Every queue answers one Queue contract, so the scanner and the console's
// drill-down never switch on a library.
//
// A service that only writes counters imports store, never this package: what is here is the
// console's. Of hourglass's packages it imports store.
package jobs
