package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// startServer runs redis-server on a free loopback port and returns its address and a stop.
func startServer() (string, func(), error) { return startServerWith() }

// startServerWith is startServer with more arguments to redis-server.
func startServerWith(extra ...string) (string, func(), error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("bench: no redis-server on PATH (Debian: apt-get install redis-server), and no --addr given")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"}, extra...)
	cmd := exec.Command(bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("bench: start redis-server: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		// The port was free a moment ago; make sure the server answering is the one started.
		if info, err := c.Info(context.Background(), "server").Result(); err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(cmd.Process.Pid)+"\r\n") {
				return addr, stop, nil
			}
			stop()
			return "", nil, fmt.Errorf("bench: another server took port %s before redis-server did; run bench again", port)
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("bench: redis-server did not answer: %s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// redisCPU is the CPU seconds the server has used, from INFO cpu.
func redisCPU(ctx context.Context, rdb *redis.Client) (float64, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, f := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
		}
	}
	return total, nil
}
