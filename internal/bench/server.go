package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// startServer runs redis-server on a free loopback port, as the tests do (internal/redistest),
// and returns its address and a stop that ends it and removes its directory.
func startServer() (string, func(), error) {
	dir, err := os.MkdirTemp("", "hourglass-bench-")
	if err != nil {
		return "", nil, err
	}
	s, err := redistest.Launch(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("bench: %w, and no --addr given", err)
	}
	return s.Addr, func() { s.Stop(); os.RemoveAll(dir) }, nil
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
