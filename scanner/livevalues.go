package scanner

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// LiveValue is one key's live read: its value, or Gone (no key, or no longer an integer).
type LiveValue struct {
	Value int64
	Gone  bool
}

// ReadLive reads names' integer values again, as a Watcher's live reads do between sweeps: with
// MGET, at most valueChunk keys a command, of one hash slot on a cluster, in one pipeline.
func ReadLive(ctx context.Context, rdb redis.UniversalClient, names []string) ([]LiveValue, error) {
	if len(names) == 0 {
		return nil, nil
	}
	groups := bySlot(rdb, len(names), func(i int) string { return names[i] })
	pipe := rdb.Pipeline()
	type chunk struct {
		idx []int
		cmd *redis.SliceCmd
	}
	var chunks []chunk
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), valueChunk)
			args := make([]string, n)
			for j, i := range idx[:n] {
				args[j] = names[i]
			}
			chunks = append(chunks, chunk{idx[:n], pipe.MGet(ctx, args...)})
			idx = idx[n:]
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return nil, fmt.Errorf("scanner: live reads: %w", err)
	}
	out := make([]LiveValue, len(names))
	for _, c := range chunks {
		vals, err := c.cmd.Result()
		if err != nil {
			return nil, fmt.Errorf("scanner: live reads: MGET: %w", err)
		}
		for j, i := range c.idx {
			out[i].Gone = true
			if j < len(vals) {
				if s, ok := vals[j].(string); ok {
					out[i].Value, out[i].Gone = parseLive(s)
				}
			}
		}
	}
	return out, nil
}

func parseLive(s string) (int64, bool) {
	v, ok := ParseInteger(s)
	return v, !ok
}
