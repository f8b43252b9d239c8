// Package config owns what the user asks for. That is the config file, read and validated with
// every problem named by file:line, and the usage errors of a command line (UsageError, exit code
// 2). The shipped config.toml stands at the module's root; the root package embeds it and hands it
// down as the default and the reference. It turns the file into the store's families and the
// scanner's structure specs. Of hourglass's packages it imports store, store/jobs, store/limits,
// scanner, snapshot and internal/format. It takes the job and limiter libraries' layouts by name,
// snapshot for the Watcher's shortest refresh, and format to keep an error's text on one line. It
// does no Redis I/O.
package config
