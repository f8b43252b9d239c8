// Package config owns what the user asks for: the config file (config.toml, shipped compiled in
// as the default and the reference), read and validated with every problem named by file:line,
// and the usage errors of a command line (UsageError, exit code 2). It turns the file into the
// store's families and the scanner's structure specs, so it may import store and scanner, and
// nothing else of hourglass's. It does no Redis I/O.
package config
