package main

import _ "embed"

// shippedConfig is config.toml as released, compiled in: the default when no config file is
// given, and the commented reference of every key. It stands beside go.mod so a user finds and
// copies it where they expect it; internal/cli hands it down to the commands.
//
//go:embed config.toml
var shippedConfig []byte
