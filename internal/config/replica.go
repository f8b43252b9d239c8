package config

import (
	"strconv"

	"github.com/hourglass-dev/hourglass/store"
)

// The values of [redis] read_from.
const (
	ReadPrimary = "primary"
	ReadReplica = "replica"
)

// ReadFromConfig says where the sweeps read: the primary (the default), or a replica. The
// replicas of a standalone primary are given by address; through Sentinel they are the
// Sentinels' word.
type ReadFromConfig struct {
	From     string   // ReadPrimary (or "", the default) or ReadReplica
	Replicas []string // host:port of a standalone primary's replicas, best first

	at Error // where read_from was set, for the error when no replica is known
}

// Replica reports whether the sweeps read from a replica.
func (r ReadFromConfig) Replica() bool { return r.From == ReadReplica }

// readFrom reads [redis]'s read_from and replica_addrs.
func (c *checker) readFrom(t table) ReadFromConfig {
	var r ReadFromConfig
	if v, ok := c.str(t, "read_from"); ok {
		if v != ReadPrimary && v != ReadReplica {
			c.fail(t.path+".read_from", "is %q: want \"primary\" or \"replica\"", v)
		}
		r.From = v
		r.at = Error{File: c.file, Line: c.lines.lineOf(t.path + ".read_from"), Key: "redis.read_from"}
	}
	addrs, _ := c.stringList(t, "replica_addrs")
	for i, a := range addrs {
		if msg := checkReplicaAddr(a); msg != "" {
			c.fail(t.path+".replica_addrs["+strconv.Itoa(i)+"]", "%s", msg)
		}
	}
	r.Replicas = addrs
	return r
}

// checkReplicaAddr says what is wrong with a replica's address, or "": a host:port.
func checkReplicaAddr(a string) string {
	tg, err := store.ParseTarget([]string{a}, "", "")
	switch {
	case err != nil:
		return err.Error()
	case tg.Sentinel != nil || a != tg.Addrs[0]:
		return "want host:port (a replica's address; its login and TLS are the primary's)"
	}
	return ""
}

// ReplicaProblem is why the sweeps cannot read from a replica as the table asks (nil when
// they can, or read from the primary): a standalone Redis given no replica address, or a
// Cluster (whose replicas are not read yet). Through Sentinel the replicas are found when it
// connects. The error names read_from's file:line when the file set it.
func (r RedisConfig) ReplicaProblem(cluster bool) error {
	if !r.ReadFrom.Replica() || !r.Real() {
		if r.ReadFrom.Replica() && !r.Real() {
			return r.readFromErr("needs a real Redis: the embedded one has no replica")
		}
		return nil
	}
	switch {
	case cluster || len(r.Addrs) > 1:
		return r.readFromErr("is not supported on a Cluster yet: read from the primaries")
	case r.Sentinel.Master == "" && len(r.ReadFrom.Replicas) == 0 && !store.IsSentinelAddr(r.Addrs[0]):
		return r.readFromErr("has no replica to read: give [redis] replica_addrs (or --replica host:port), or reach the primary through Sentinel")
	}
	return nil
}

// readFromErr is msg about reading from a replica, at read_from's line when the file set it.
func (r RedisConfig) readFromErr(msg string) error {
	if r.ReadFrom.at.File == "" {
		return Usagef("--read-from replica %s", msg)
	}
	e := r.ReadFrom.at
	e.Msg = `"replica" ` + msg
	return UsageError{&e}
}

// SetReadFrom applies --read-from and --replica over the file's read_from and replica_addrs.
func (r *RedisConfig) SetReadFrom(from string, replicas []string) {
	if from != "" {
		r.ReadFrom.From, r.ReadFrom.at = from, Error{}
	}
	if len(replicas) > 0 {
		r.ReadFrom.Replicas = replicas
	}
}
