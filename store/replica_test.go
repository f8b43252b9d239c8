package store

import (
	"slices"
	"testing"
)

// The replicas a Sentinel lists are read from unless it flags them down or disconnected, or
// reports their link to the primary broken: a SENTINEL REPLICAS reply's fields, as Redis 7.0
// gives them.
func TestReplicasUp(t *testing.T) {
	nodes := []map[string]string{
		{"ip": "10.0.0.2", "port": "6379", "flags": "slave", "master-link-status": "ok"},
		{"ip": "10.0.0.3", "port": "6379", "flags": "s_down,slave", "master-link-status": "ok"},
		{"ip": "10.0.0.4", "port": "6379", "flags": "slave,disconnected", "master-link-status": "ok"},
		{"ip": "10.0.0.5", "port": "6379", "flags": "slave", "master-link-status": "err"},
		{"ip": "10.0.0.6", "port": "6380", "flags": "slave", "master-link-status": "ok"},
		{"ip": "", "port": "6379", "flags": "slave"},
	}
	if got, want := replicasUp(nodes), []string{"10.0.0.2:6379", "10.0.0.6:6380"}; !slices.Equal(got, want) {
		t.Errorf("replicas up %v, want %v", got, want)
	}
}
