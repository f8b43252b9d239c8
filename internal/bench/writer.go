package bench

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"hourglass/store"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// writer adds events on one goroutine while another flushes, as a service runs it.
func (b *bencher) writer(st *store.Store, f *store.Family, events, pairs, lanes, calls int, zipf bool) (rate3, error) {
	w := st.NewWriter(store.WriterOptions{KeysPerCall: 2 * pairs, Lanes: lanes, CallsPerPipeline: calls})
	// Dims are drawn the way redis-benchmark draws its keys (-r 1000000: uniformly from a
	// million), so both find the same share of keys already there; or Zipf-like from 10,000.
	tuples := b.tuples()
	dims := len(tuples)
	if zipf {
		dims = 10_000
	}
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.1, 1, uint64(dims-1))
	var sent store.FlushResult
	var addErr atomic.Value
	start := time.Now()
	added := make(chan struct{})
	go func() {
		defer close(added)
		for range events {
			idx := r.IntN(dims)
			if zipf {
				idx = int(z.Uint64())
			}
			if err := w.Add(f, tuples[idx], 1, time.Time{}); err != nil {
				addErr.Store(fmt.Sprint(err))
				return
			}
		}
	}()
	for done := false; !done || w.Pending() > 0; {
		select {
		case <-added:
			done = true
		default:
		}
		res, err := w.Flush(b.ctx)
		if err != nil {
			return rate3{}, err
		}
		sent.Events += res.Events
		sent.Keys += res.Keys
		sent.Calls += res.Calls
	}
	if e, _ := addErr.Load().(string); e != "" {
		return rate3{}, errors.New(e)
	}
	secs := time.Since(start).Seconds()
	return rate3{EventsPerSec: float64(sent.Events) / secs, PairsPerSec: float64(sent.Keys) / 2 / secs,
		ScriptsPerSec: float64(sent.Calls) / secs}, nil
}

// tuples returns the dims tuples the writer cases draw from, made once.
func (b *bencher) tuples() [][]string {
	if b.dims == nil {
		b.dims = make([][]string, benchKeyspace)
		for i := range b.dims {
			b.dims[i] = []string{"c" + strconv.Itoa(i%97), strconv.Itoa(i)}
		}
	}
	return b.dims
}

// bareClient sends the calls redis-benchmark sends (one pair a call, sequence 0, keys drawn from
// a million) through go-redis alone, in pipelines of 16 on each of conns connections at once.
func (b *bencher) bareClient(n, conns int) (float64, error) {
	st := store.New(b.rdb, store.Options{})
	if err := st.LoadScripts(b.ctx); err != nil {
		return 0, err
	}
	if err := b.clean(); err != nil {
		return 0, err
	}
	sha := store.CounterScriptHash()
	seq, prefix := "{"+store.BenchKey("gr")+"}:seq", store.BenchKey("gr:")
	exp := time.Now().Add(3 * time.Hour).UnixMilli()
	const depth = 16
	each := n / conns / depth * depth
	errs := make([]error, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(9, uint64(c)))
			for i := 0; i < each; i += depth {
				pipe := b.rdb.Pipeline()
				for range depth {
					h, d := strconv.Itoa(r.IntN(benchKeyspace)), strconv.Itoa(r.IntN(benchKeyspace))
					pipe.EvalSha(b.ctx, sha, []string{seq, "{" + prefix + h + "}:h", "{" + prefix + d + "}:d"}, 0, 0, 0, 1, exp, 1, exp)
				}
				if _, err := pipe.Exec(b.ctx); err != nil {
					errs[c] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(each*conns) / time.Since(start).Seconds(), nil
}

// redisBenchmark runs redis-benchmark -c clients -P 16 on the counter script, one pair a call.
func (b *bencher) redisBenchmark(n, clients int) (float64, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark is not installed (Debian: redis-tools)")
	}
	st := store.New(b.rdb, store.Options{})
	if err := st.LoadScripts(b.ctx); err != nil {
		return 0, err
	}
	if err := b.clean(); err != nil {
		return 0, err
	}
	if b.target.TLS != nil {
		return 0, fmt.Errorf("skipped over TLS: redis-benchmark would need its own TLS options")
	}
	exp := strconv.FormatInt(time.Now().Add(3*time.Hour).UnixMilli(), 10)
	host, port, err := net.SplitHostPort(b.target.Addrs[0])
	if err != nil {
		return 0, err
	}
	args := []string{"-h", host, "-p", port, "--dbnum", strconv.Itoa(b.target.DB), "-c", strconv.Itoa(clients), "-P", "16",
		"-n", strconv.Itoa(n), "-r", strconv.Itoa(benchKeyspace), "--csv"}
	if b.target.Username != "" {
		args = append(args, "--user", b.target.Username)
	}
	args = append(args, "EVALSHA", store.CounterScriptHash(), "3", "{"+store.BenchKey("rb")+"}:seq", "{"+store.BenchKey("rb:__rand_int__")+"}:h",
		"{"+store.BenchKey("rb:__rand_int__")+"}:d", "0", "0", "0", "1", exp, "1", exp)
	cmd := exec.CommandContext(b.ctx, bin, args...)
	if b.target.Password != "" { // by the environment, not the command line, where ps would show it
		cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+b.target.Password)
	}
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %v: %s", err, out)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark printed %q", out)
	}
	return strconv.ParseFloat(rows[1][1], 64)
}
