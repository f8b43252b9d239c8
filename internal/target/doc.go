// Package target opens the Redis a command runs against. That is a standalone server or a Redis
// Cluster (found from one node's address, too), with its user, password and TLS from the config.
// When the config names no address, it is an embedded Redis: miniredis on a loopback port, used
// over the network exactly as a real one is. Of hourglass's packages it imports internal/config and
// store.
package target
