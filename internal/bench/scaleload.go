package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// scaleBatch is how many SET commands a connection sends before handing their replies' count
// to its reader; scaleInFlight is how many such batches may wait for their replies.
const (
	scaleBatch    = 10_000
	scaleInFlight = 4
)

// respConn writes pipelined SET commands to one server over raw RESP, and reads their replies
// on a goroutine of its own, so that the server never waits for the writer to read.
type respConn struct {
	c       net.Conn
	w       *bufio.Writer
	pending int
	batches chan int
	done    chan error
}

func dialRESP(ctx context.Context, addr string) (*respConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	rc := &respConn{c: c, w: bufio.NewWriterSize(c, 1<<20), batches: make(chan int, scaleInFlight), done: make(chan error, 1)}
	go rc.readReplies()
	return rc, nil
}

// readReplies reads each batch's replies: one +OK a SET, or the first error. After a failed
// read it drains the batches unread, so the writer is never left waiting on it.
func (rc *respConn) readReplies() {
	r := bufio.NewReaderSize(rc.c, 1<<16)
	var firstErr, readErr error
	for n := range rc.batches {
		for i := 0; i < n && readErr == nil; i++ {
			line, err := r.ReadSlice('\n')
			if err != nil {
				readErr = err
				break
			}
			if len(line) > 2 && line[0] == '-' && firstErr == nil {
				firstErr = errors.New(string(line[1 : len(line)-2]))
			}
		}
	}
	if readErr != nil {
		firstErr = readErr
	}
	rc.done <- firstErr
}

// set queues SET key value EXAT expireAt.
func (rc *respConn) set(key string, value, expireAt int64) error {
	var num [20]byte
	rc.w.WriteString("*5\r\n$3\r\nSET\r\n$")
	rc.w.WriteString(strconv.Itoa(len(key)))
	rc.w.WriteString("\r\n")
	rc.w.WriteString(key)
	v := strconv.AppendInt(num[:0], value, 10)
	rc.w.WriteString("\r\n$" + strconv.Itoa(len(v)) + "\r\n")
	rc.w.Write(v)
	rc.w.WriteString("\r\n$4\r\nEXAT\r\n$")
	e := strconv.AppendInt(num[:0], expireAt, 10)
	rc.w.WriteString(strconv.Itoa(len(e)) + "\r\n")
	rc.w.Write(e)
	rc.w.WriteString("\r\n")
	if rc.pending++; rc.pending >= scaleBatch {
		return rc.flush()
	}
	return nil
}

// flush sends what is queued and hands its count to the reader.
func (rc *respConn) flush() error {
	if rc.pending == 0 {
		return nil
	}
	if err := rc.w.Flush(); err != nil {
		return err
	}
	rc.batches <- rc.pending
	rc.pending = 0
	return nil
}

// close sends the rest, waits for every reply and closes the connection.
func (rc *respConn) close() error {
	err := rc.flush()
	close(rc.batches)
	if rerr := <-rc.done; err == nil {
		err = rerr
	}
	rc.c.Close()
	return err
}

// router picks the node a key goes to: 0 on one server, the master holding its slot on a
// cluster.
type router func(key string) int

// loadScale writes total keys of fams to the nodes at addrs on workers goroutines, each with a
// connection to every node, and returns what was written of each family (in fams' order).
func loadScale(ctx context.Context, addrs []string, route router, fams []*scaleFam, total int64, workers int) ([]*exact, error) {
	out := make([]*exact, len(fams))
	for i := range out {
		out[i] = &exact{Windows: map[string]*winExact{}}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	ctx, cancel := context.WithCancel(ctx) // one worker's failure stops the others
	defer cancel()
	for worker := range workers {
		wg.Go(func() {
			got, err := loadWorker(ctx, addrs, route, fams, total, worker, workers)
			if err != nil {
				errs <- err
				cancel()
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for i, ex := range got {
				out[i].add(ex)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("loading the scale keyspace: %w", err)
	}
	return out, nil
}

// loadWorker writes one worker's share of every family.
func loadWorker(ctx context.Context, addrs []string, route router, fams []*scaleFam, total int64, worker, workers int) ([]*exact, error) {
	conns := make([]*respConn, len(addrs))
	for i, addr := range addrs {
		rc, err := dialRESP(ctx, addr)
		if err != nil {
			for _, c := range conns[:i] {
				c.close()
			}
			return nil, err
		}
		conns[i] = rc
	}
	var n int
	emit := func(key string, value, expireAt int64) error {
		if n++; n%scaleBatch == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		return conns[route(key)].set(key, value, expireAt)
	}
	var got []*exact
	var err error
	for i, sf := range fams {
		quota, seed := sf.plan(i, total, workers)
		var ex *exact
		if ex, err = sf.generate(worker, workers, quota, seed, emit); err != nil {
			break
		}
		got = append(got, ex)
	}
	for _, c := range conns {
		if cerr := c.close(); err == nil {
			err = cerr
		}
	}
	return got, err
}

// plan is each worker's quota of the family's keys (the i-th of the keyspace, of total keys on
// workers), and the seed of its draws: generate replays a worker's keys from them.
func (sf *scaleFam) plan(i int, total int64, workers int) (quota int64, seed uint64) {
	return int64(sf.share * float64(total) / float64(workers)), uint64(i)*7919 + 1
}

// slotRouter routes a key to the master whose slot range holds it: owners[slot] is its index.
func slotRouter(owners []int) router {
	return func(key string) int { return owners[store.Slot(key)] }
}

// since is the seconds since t, for the report.
func since(t time.Time) float64 { return time.Since(t).Seconds() }
