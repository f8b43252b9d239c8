// Package target opens the Redis a command runs against: a standalone server or a Redis Cluster
// (found from one node's address, too), with its user, password and TLS from the config, or, when
// the config names no address, an embedded Redis (miniredis on a loopback port) that is used over
// the network exactly as a real one is. Of hourglass's packages it imports internal/config and
// store.
package target
