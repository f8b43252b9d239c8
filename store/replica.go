package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReplicaClient is a read-only client of one replica at addr, with the data nodes' login and
// TLS. It is for reads alone: a sweep run on a replica spares the primary. Nothing that writes
// is ever handed one; a replica refuses writes with READONLY all the same.
func (t Target) ReplicaClient(addr string) *redis.Client {
	const dial, io = 2 * time.Second, 3 * time.Second
	tlsCfg := t.TLS
	if tlsCfg != nil {
		tlsCfg = tlsCfg.Clone()
		// Each replica is verified by its own name, not the primary's.
		if host, _, err := net.SplitHostPort(addr); err == nil && (t.Sentinel == nil || tlsCfg.ServerName == "") {
			tlsCfg.ServerName = host
		}
	}
	return redis.NewClient(&redis.Options{
		Addr: addr, Username: t.Username, Password: t.Password, DB: t.DB, TLSConfig: tlsCfg,
		DialTimeout: dial, ReadTimeout: io, WriteTimeout: io, DialerRetries: 1,
	})
}

// ErrNoReplica is why a sweep cannot read from a replica: none is given or known.
var ErrNoReplica = errors.New("no replica")

// SentinelReplicas asks the Sentinels of t which replicas the primary has (SENTINEL REPLICAS),
// and returns those no Sentinel flags down or disconnected, first answer first. It is
// ErrNoReplica when the Sentinels list none at all; replicas listed but none up may come up.
func SentinelReplicas(ctx context.Context, t Target) ([]string, error) {
	var lastErr error
	for _, addr := range t.Addrs {
		c := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: t.Sentinel.Username, Password: t.Sentinel.Password,
			TLSConfig: t.TLS, DialTimeout: sentinelAsk, ReadTimeout: sentinelAsk, MaxRetries: -1, DialerRetries: 1})
		ask, cancel := context.WithTimeout(ctx, sentinelAsk)
		nodes, err := c.Replicas(ask, t.Sentinel.Master).Result()
		cancel()
		_ = c.Close()
		if err != nil {
			lastErr = fmt.Errorf("Sentinel %s: %s", addr, oneLineErr(err))
			continue
		}
		if up := replicasUp(nodes); len(up) > 0 {
			return up, nil
		}
		lastErr = fmt.Errorf("%w of %q: the Sentinels list none", ErrNoReplica, t.Sentinel.Master)
		if len(nodes) > 0 {
			lastErr = fmt.Errorf("the Sentinels list %d replicas of %q, none up", len(nodes), t.Sentinel.Master)
		}
	}
	return nil, lastErr
}

// replicasUp are the addresses of the replicas a Sentinel lists that it does not flag down or
// disconnected, and whose link to the primary it reports up.
func replicasUp(nodes []map[string]string) []string {
	var out []string
	for _, n := range nodes {
		down := n["master-link-status"] == "err"
		for _, f := range strings.Split(n["flags"], ",") {
			down = down || f == "s_down" || f == "o_down" || f == "disconnected"
		}
		if !down && n["ip"] != "" && n["port"] != "" {
			out = append(out, net.JoinHostPort(n["ip"], n["port"]))
		}
	}
	return out
}

// ReplicaState is what a replica says of itself (ROLE and INFO replication): whether it is a
// replica still, its link to the primary, and how much of the primary's stream it has.
type ReplicaState struct {
	Role     string // "slave" for a replica; "master" for one promoted
	LinkUp   bool   // master_link_status:up
	LastIO   time.Duration
	Offset   int64 // slave_repl_offset
	Primary  string
	Unknowns string // what it would not say (ROLE or INFO refused), "" when all is known
}

// ReadReplicaState reads what the node at c says of its replication, in one pipeline.
func ReadReplicaState(ctx context.Context, c redis.Cmdable) (ReplicaState, error) {
	pipe := c.Pipeline()
	role := pipe.Do(ctx, "ROLE")
	info := pipe.Info(ctx, "replication")
	_, _ = pipe.Exec(ctx)
	var st ReplicaState
	r, err := role.Slice()
	if err != nil {
		if _, refused := TransientReply(err); !refused {
			return st, err
		}
		st.Unknowns = "ROLE refused"
	} else if len(r) > 0 {
		st.Role = fmt.Sprint(r[0])
		if len(r) >= 3 {
			st.Primary = net.JoinHostPort(fmt.Sprint(r[1]), fmt.Sprint(r[2]))
		}
	}
	text, err := info.Result()
	if err != nil {
		if _, refused := TransientReply(err); !refused {
			return st, err
		}
		st.Unknowns = strings.TrimPrefix(st.Unknowns+", INFO refused", ", ")
		return st, nil
	}
	fields := InfoFields(text)
	if st.Role == "" {
		st.Role = fields["role"]
	}
	st.LinkUp = fields["master_link_status"] == "up"
	if s, err := strconv.Atoi(fields["master_last_io_seconds_ago"]); err == nil {
		st.LastIO = time.Duration(s) * time.Second
	}
	st.Offset, _ = strconv.ParseInt(fields["slave_repl_offset"], 10, 64)
	return st, nil
}

// PrimaryOffset is the primary's replication offset (master_repl_offset), what its replicas'
// offsets are measured against.
func PrimaryOffset(ctx context.Context, c redis.Cmdable) (int64, error) {
	text, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(InfoFields(text)["master_repl_offset"], 10, 64)
}

// InfoFields splits an INFO reply into its name:value fields, section headers left out.
func InfoFields(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}
