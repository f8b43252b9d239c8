package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// progress is bench's one line on stderr: the step under way, its number of the total, and the
// time since the run began. On a terminal the line is rewritten in place (and its clock moves
// each second); elsewhere each step is a line of its own.
type progress struct {
	out      io.Writer
	terminal bool
	width    int // the terminal's columns
	total    int
	begun    time.Time

	mu    sync.Mutex
	n     int
	step  string
	stop  chan struct{}
	ended bool
}

func newProgress(out io.Writer, terminal bool, total int) *progress {
	p := &progress{out: out, terminal: terminal, width: 80, total: total, begun: time.Now(), stop: make(chan struct{})}
	if f, ok := out.(*os.File); ok && terminal {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 20 {
			p.width = w
		}
	}
	if terminal {
		go p.tick()
	}
	return p
}

// next starts the next step.
func (p *progress) next(step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.step = step
	p.show()
}

// show writes the line; p.mu is held.
func (p *progress) show() {
	if p.ended {
		return
	}
	elapsed := time.Since(p.begun).Truncate(time.Second)
	line := fmt.Sprintf("hourglass: bench: %d/%d %s: %s", p.n, p.total, elapsed, p.step)
	if p.terminal { // cut to the terminal's width: a line that wraps cannot be rewritten
		if r := []rune(line); len(r) > p.width-1 {
			line = string(r[:p.width-2]) + "…"
		}
		fmt.Fprint(p.out, "\r\x1b[K"+line)
		return
	}
	fmt.Fprintln(p.out, line)
}

func (p *progress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.n > 0 {
				p.show()
			}
			p.mu.Unlock()
		}
	}
}

// end stops the line: with done, a last line says how long the run took; without (an error,
// ctrl+c), a terminal's line is cleared for the error that follows.
func (p *progress) end(done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	close(p.stop)
	if p.terminal {
		fmt.Fprint(p.out, "\r\x1b[K")
	}
	if done {
		fmt.Fprintf(p.out, "hourglass: bench: %d steps in %s\n", p.n, time.Since(p.begun).Round(time.Second))
	}
}

// steps is how many steps a run has: the total the progress line counts to.
func steps(own bool, passes int) int {
	n := 2 + 4 + 3      // go-redis alone, redis-benchmark, limiter, delay queue, bloom
	n += 1 + passes + 2 // the sweep's keys, its passes beside raw SCAN and the read floor, a sweep and a raw SCAN with SLOWLOG
	n += 2              // the console's and serve's share
	for _, c := range writerPlan {
		n += rounds(c)
	}
	n += len(floorPlan) * steadyRounds // the floors, in rounds with the writer's steady cases
	n += discoverSteps
	if !own {
		n++ // deleting bench's keys
	}
	return n
}

// commas is n with thousands separated, as the steps say it.
func commas(n int) string { return format.Commas(int64(n)) }
