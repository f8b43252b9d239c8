package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the master name the helper's Sentinels watch.
const SentinelMaster = "hgmaster"

// Sentinels is a primary, its replicas and the redis-sentinel processes that watch them, started
// for one test. The Sentinels find a primary down after a second, so a failover takes a few.
type Sentinels struct {
	Master string   // the master name they know it by
	Addrs  []string // the Sentinels' addresses
	// Nodes are the data nodes, the first started as the primary; which is primary now is
	// Sentinel's word (Primary).
	Nodes     []*Server
	sentinels []*sentinelProc
	pass      string // the Sentinels' own password, "" for none
}

// sentinelProc is one redis-sentinel process.
type sentinelProc struct {
	addr   string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	exited chan struct{}
}

// SentinelBinary returns the path of redis-sentinel, skipping (or, under CI, failing) the test
// without it.
func SentinelBinary(t testing.TB) string {
	t.Helper()
	return installed(t, "redis-sentinel")
}

// StartSentinels starts one primary, replicas replicas of it and sentinels redis-sentinel
// processes (quorum a majority of them), all on loopback. It waits until the replicas are in
// sync and every Sentinel knows every replica and every other Sentinel, so a failover can
// happen at once. Everything stops when the test ends. pass, when set, is the Sentinels' own
// password (their requirepass); the data nodes take no password.
func StartSentinels(t testing.TB, replicas, sentinels int, pass string) *Sentinels {
	t.Helper()
	bin := SentinelBinary(t)
	s := &Sentinels{Master: SentinelMaster, pass: pass}
	primary := Start(t)
	s.Nodes = append(s.Nodes, primary)
	host, port, _ := net.SplitHostPort(primary.Addr)
	for range replicas {
		s.Nodes = append(s.Nodes, Start(t, "--replicaof", host, port))
	}
	for i := range replicas {
		WaitLink(t, s.Nodes[1+i])
	}
	quorum := sentinels/2 + 1
	for i := range sentinels {
		p, err := launchSentinel(bin, filepath.Join(t.TempDir(), fmt.Sprintf("sentinel%d.conf", i)), host, port, quorum, pass)
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		t.Cleanup(p.stop)
		s.sentinels = append(s.sentinels, p)
		s.Addrs = append(s.Addrs, p.addr)
	}
	Eventually(t, "every Sentinel to know every replica and Sentinel", 30*time.Second, func() bool {
		return s.known(replicas, sentinels-1)
	})
	return s
}

// known reports whether every Sentinel lists replicas replicas and others other Sentinels.
func (s *Sentinels) known(replicas, others int) bool {
	for _, addr := range s.Addrs {
		c := redis.NewSentinelClient(&redis.Options{Addr: addr, Password: s.pass})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		m, err := c.Master(ctx, s.Master).Result()
		cancel()
		defer c.Close()
		if err != nil || m["num-slaves"] != strconv.Itoa(replicas) || m["num-other-sentinels"] != strconv.Itoa(others) {
			return false
		}
		if !connected(c, s.Master) {
			return false
		}
	}
	return true
}

// connected reports whether the Sentinel at c has reached every replica it lists: one just
// learnt of is flagged disconnected until it has.
func connected(c *redis.SentinelClient, master string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	nodes, err := c.Replicas(ctx, master).Result()
	if err != nil {
		return false
	}
	for _, n := range nodes {
		if strings.Contains(n["flags"], "disconnected") || n["master-link-status"] != "ok" {
			return false
		}
	}
	return true
}

// launchSentinel writes a Sentinel config watching the primary at host:port and starts
// redis-sentinel on it, on a free port picked again on each try.
func launchSentinel(bin, conf, host, port string, quorum int, pass string) (*sentinelProc, error) {
	var lastErr error
	for range 5 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\nloglevel warning\ndir %s\n"+
			"sentinel monitor %s %s %s %d\nsentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 6000\nsentinel parallel-syncs %s 2\n",
			p, filepath.Dir(conf), SentinelMaster, host, port, quorum, SentinelMaster, SentinelMaster, SentinelMaster)
		if pass != "" {
			text += fmt.Sprintf("requirepass %s\nsentinel sentinel-pass %s\n", pass, pass)
		}
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		sp, err := startSentinel(bin, conf, p, pass)
		if err == nil {
			return sp, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// startSentinel runs redis-sentinel on conf and waits until it answers PING on port.
func startSentinel(bin, conf string, port int, pass string) (*sentinelProc, error) {
	cmd := exec.Command(bin, conf)
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &sentinelProc{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, log: log, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	c := redis.NewClient(&redis.Options{Addr: p.addr, Password: pass, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		info, err := c.Info(ctx, "server").Result()
		cancel()
		if err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(cmd.Process.Pid)+"\r\n") {
				return p, nil
			}
			p.stop()
			return nil, fmt.Errorf("another server answers on port %d", port)
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("redis-sentinel exited: %s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("redis-sentinel on port %d did not answer in 10s: %v", port, err)
		}
	}
}

// stop kills the Sentinel by its pid and waits for it to exit.
func (p *sentinelProc) stop() {
	_ = p.cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
}

// StopSentinel stops the i-th Sentinel; its address then refuses connections, until another
// process takes the port.
func (s *Sentinels) StopSentinel(i int) { s.sentinels[i].stop() }

// Primary is the primary's address as the first Sentinel that answers says it is.
func (s *Sentinels) Primary(t testing.TB) string {
	t.Helper()
	for _, addr := range s.Addrs {
		if a := askPrimary(addr, s.Master, s.pass); a != "" {
			return a
		}
	}
	t.Fatalf("redistest: no Sentinel names the primary of %s", s.Master)
	return ""
}

// askPrimary is the primary's address as the Sentinel at addr says it is, or "".
func askPrimary(addr, master, pass string) string {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr, Password: pass, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hp, err := c.GetMasterAddrByName(ctx, master).Result()
	if err != nil || len(hp) != 2 {
		return ""
	}
	return net.JoinHostPort(hp[0], hp[1])
}

// Node is the data node at addr.
func (s *Sentinels) Node(t testing.TB, addr string) *Server {
	t.Helper()
	for _, n := range s.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	t.Fatalf("redistest: no data node at %s", addr)
	return nil
}

// Failover asks a Sentinel for a failover (SENTINEL FAILOVER), and waits until every Sentinel
// that answers names a new primary and that node says it is one. It returns the new primary's
// address, or "" after reporting an error (it may run on a goroutine of its own).
func (s *Sentinels) Failover(t testing.TB) string {
	t.Helper()
	old := s.Primary(t)
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addrs[0], Password: s.pass})
	defer c.Close()
	if err := c.Failover(context.Background(), s.Master).Err(); err != nil {
		t.Errorf("redistest: SENTINEL FAILOVER: %v", err)
		return ""
	}
	return s.awaitNew(t, old)
}

// KillPrimary kills the primary's process, and waits as Failover does until the Sentinels have
// promoted a replica. It returns the new primary's address, or "" after reporting an error.
func (s *Sentinels) KillPrimary(t testing.TB) string {
	t.Helper()
	old := s.Primary(t)
	s.Node(t, old).Stop()
	return s.awaitNew(t, old)
}

// awaitNew waits until every Sentinel still running names a primary other than old, all the
// same one, and that node reports the master role.
func (s *Sentinels) awaitNew(t testing.TB, old string) string {
	t.Helper()
	var now string
	ok := Until(60*time.Second, func() bool {
		now = ""
		for i, addr := range s.Addrs {
			select {
			case <-s.sentinels[i].exited:
				continue
			default:
			}
			a := askPrimary(addr, s.Master, s.pass)
			if a == "" || a == old || (now != "" && a != now) {
				return false
			}
			now = a
		}
		return now != "" && isMaster(now)
	})
	if !ok {
		t.Errorf("redistest: the Sentinels did not agree on a new primary in 60s (was %s, now %q)", old, now)
		return ""
	}
	return now
}

// isMaster reports whether the node at addr says its role is master.
func isMaster(addr string) bool {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	role, err := c.Do(ctx, "ROLE").Slice()
	return err == nil && len(role) > 0 && role[0] == "master"
}
