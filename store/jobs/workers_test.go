package jobs

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// running is a fixture program left running: its first line of standard output, and how to end it.
type running struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  string
}

// startRunning starts a program in dir that keeps running, and reads its first line of output
// (none when firstLine is false); the test's cleanup ends it by its pid.
func startRunning(t *testing.T, firstLine bool, name, dir string, args ...string) *running {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1") // no __pycache__ beside a fixture
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, stdin: stdin}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		if firstLine {
			line, _ := br.ReadString('\n')
			lines <- line
		}
		_, _ = io.Copy(io.Discard, br)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if !firstLine {
		return r
	}
	select {
	case r.line = <-lines:
	case <-time.After(time.Minute):
	}
	if r.line == "" { // ended, or printed nothing within a minute
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // stderr is whole, and no longer written, once Wait returns
		t.Fatalf("%s %v printed no line; stderr: %s", name, args, stderr.String())
	}
	return r
}

// readWorkers is hourglass's reader, failing the test on an error.
func readWorkers(t *testing.T, src Source, rdb redis.UniversalClient, queues []string, now time.Time) Workers {
	t.Helper()
	w, err := src.Workers(t.Context(), rdb, queues, now)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// sidekiqListed is one process as processes.rb prints Sidekiq::ProcessSet's.
type sidekiqListed struct {
	Identity    string   `json:"identity"`
	Hostname    string   `json:"hostname"`
	PID         int64    `json:"pid"`
	Busy        int64    `json:"busy"`
	Concurrency int64    `json:"concurrency"`
	Queues      []string `json:"queues"`
	Beat        float64  `json:"beat"`
	Quiet       bool     `json:"quiet"`
	StartedAt   float64  `json:"started_at"`
}

// The process fixture.rb ran (a real Sidekiq launcher, which beat, ran a job and exited) is
// listed as Sidekiq::ProcessSet lists it, and is stale once 60 s have passed since its beat.
func TestWorkersSidekiq(t *testing.T) {
	for _, ns := range []string{"", "myapp"} {
		t.Run("ns="+ns, func(t *testing.T) {
			rdb, rep := sidekiqFixture(t, ns)
			mods := []string{"sidekiq"}
			if ns != "" {
				mods = append(mods, "redis/namespace")
			}
			ruby := redistest.Interpreter(t, "ruby", mods...)
			var want []sidekiqListed
			redistest.RunFixture(t, ruby, "testdata/sidekiq", &want, "processes.rb", "redis://"+rdb.Options().Addr+"/0", ns)
			if len(want) != 1 || want[0].Identity != rep.Process {
				t.Fatalf("ProcessSet lists %+v, want the fixture's process %s", want, rep.Process)
			}
			p := want[0]
			beat := floatSeconds(p.Beat)
			src := Source{Layout: Sidekiq, Prefix: ns}
			got := readWorkers(t, src, rdb, nil, beat.Add(time.Second))
			if got.Found != 1 || len(got.List) != 1 {
				t.Fatalf("workers %+v, want the one process", got)
			}
			w := got.List[0]
			state := "running"
			if p.Quiet {
				state = "quiet"
			}
			if w.Identity != p.Identity || w.Host != p.Hostname || w.PID != p.PID || w.Busy != p.Busy ||
				w.Concurrency != p.Concurrency || !slices.Equal(w.Queues, p.Queues) || !w.LastBeat.Equal(beat) ||
				!w.Started.Equal(floatSeconds(p.StartedAt)) || w.State != state {
				t.Fatalf("worker %+v, want as ProcessSet: %+v", w, p)
			}
			if w.Busy != 1 || w.Stale || w.Gone {
				t.Fatalf("worker %+v: want busy 1 (the job it held) and live a second after its beat", w)
			}
			stale := readWorkers(t, src, rdb, nil, beat.Add(60*time.Second)).List[0]
			if !stale.Stale || stale.Gone || stale.StaleWhy == "" {
				t.Fatalf("60 s after its beat: %+v, want stale", stale)
			}
		})
	}
}

// rqListed is one worker as workers.py prints rq's Worker.all.
type rqListed struct {
	Name          string   `json:"name"`
	Hostname      string   `json:"hostname"`
	PID           int64    `json:"pid"`
	Queues        []string `json:"queues"`
	State         string   `json:"state"`
	CurrentJob    *string  `json:"current_job"`
	Birth         float64  `json:"birth"`
	LastHeartbeat float64  `json:"last_heartbeat"`
	Successful    int64    `json:"successful"`
	Failed        int64    `json:"failed"`
}

// A real `rq worker` process, busy with a job, is listed as rq's Worker.all lists it, its state
// and current job included; killed, it beats no more, and past its hash's expiry it is stale
// (rq drops it then).
func TestWorkersRQ(t *testing.T) {
	py := redistest.Interpreter(t, "python3", "rq")
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	url := "redis://" + srv.Addr + "/0"
	// A SimpleWorker runs its job in its own process: killed, nothing of it runs on.
	worker := startRunning(t, false, py, "testdata/rq", "-m", "rq.cli", "worker", "--url", url, "--name", "box-1",
		"--worker-class", "rq.SimpleWorker", "--logging_level", "WARNING", "high", "low")
	var held struct {
		Job string `json:"job"`
	}
	redistest.RunFixture(t, py, "testdata/rq", &held, "workers.py", url, "--hold", "low")
	var want []rqListed
	redistest.Eventually(t, "rq lists the worker busy with the job", 20*time.Second, func() bool {
		redistest.RunFixture(t, py, "testdata/rq", &want, "workers.py", url)
		return len(want) == 1 && want[0].State == "busy" && want[0].CurrentJob != nil && *want[0].CurrentJob == held.Job
	})
	src := Source{Layout: RQ}
	got := readWorkers(t, src, rdb, nil, time.Time{})
	if got.Found != 1 || len(got.List) != 1 {
		t.Fatalf("workers %+v, want the one worker", got)
	}
	w, p := got.List[0], want[0]
	if w.Identity != p.Name || w.Host != p.Hostname || w.PID != p.PID || !slices.Equal(w.Queues, p.Queues) ||
		w.State != p.State || w.CurrentJob != *p.CurrentJob || w.Done != p.Successful || w.Failed != p.Failed ||
		!w.LastBeat.Equal(floatSeconds(p.LastHeartbeat)) || !w.Started.Equal(floatSeconds(p.Birth)) {
		t.Fatalf("worker %+v, want as Worker.all: %+v", w, p)
	}
	if w.PID != int64(worker.cmd.Process.Pid) || w.Stale || w.Expires.IsZero() {
		t.Fatalf("worker %+v: want the process started (pid %d), live, with an expiry", w, worker.cmd.Process.Pid)
	}

	if err := worker.cmd.Process.Signal(syscall.SIGKILL); err != nil { // no death registered: its beat just stops
		t.Fatal(err)
	}
	_ = worker.cmd.Wait()
	after := readWorkers(t, src, rdb, nil, time.Time{}).List[0]
	if after.Stale || after.Expires.IsZero() {
		t.Fatalf("killed, before its hash expires: %+v, want listed live as rq still lists it", after)
	}
	past := readWorkers(t, src, rdb, nil, after.Expires.Add(time.Second)).List[0] // PTTL is read to the ms, again
	if !past.Stale || past.Gone {
		t.Fatalf("a second past its hash's expiry: %+v, want stale", past)
	}
}

// A running asynq server is listed as asynq's Inspector.Servers lists it, with the task it
// runs; once its expiry has passed, it is stale.
func TestWorkersAsynq(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	hold := make(chan struct{})
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 3, Queues: map[string]int{"work": 2, "mail": 1},
		LogLevel: asynq.FatalLevel})
	if err := server.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	t.Cleanup(func() { close(hold) })
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	if _, err := client.Enqueue(asynq.NewTask("hold", nil), asynq.Queue("work")); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	var want []*asynq.ServerInfo
	redistest.Eventually(t, "asynq lists the server running the task", 30*time.Second, func() bool {
		var err error
		want, err = insp.Servers()
		return err == nil && len(want) == 1 && len(want[0].ActiveWorkers) == 1
	})
	src := Source{Layout: Asynq}
	got := readWorkers(t, src, rdb, nil, time.Time{})
	if got.Found != 1 || len(got.List) != 1 {
		t.Fatalf("workers %+v, want the one server", got)
	}
	w, p := got.List[0], want[0]
	queues := slices.Sorted(maps.Keys(p.Queues))
	if w.Identity != p.Host+":"+strconv.Itoa(p.PID)+":"+p.ID || w.Host != p.Host || w.PID != int64(p.PID) ||
		w.Concurrency != int64(p.Concurrency) || !slices.Equal(w.Queues, queues) || w.State != p.Status ||
		!w.Started.Equal(p.Started) || w.Busy != int64(len(p.ActiveWorkers)) {
		t.Fatalf("worker %+v, want as Inspector.Servers: %+v", w, p)
	}
	if w.Stale || w.Expires.IsZero() || !w.LastBeat.IsZero() {
		t.Fatalf("worker %+v: want live, with an expiry and no beat time (asynq records none)", w)
	}
	past := readWorkers(t, src, rdb, nil, w.Expires.Add(time.Second)).List[0]
	if !past.Stale {
		t.Fatalf("a second past its expiry: %+v, want stale", past)
	}
	if at := readWorkers(t, src, rdb, nil, w.Expires.Add(999*time.Millisecond)).List[0]; at.Stale {
		t.Fatalf("within its expiry's second, which asynq still lists: %+v, want live", at)
	}
}

// BullMQ's workers are found as its getWorkers finds them, and are gone once they close.
func TestWorkersBullMQ(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fx := startRunning(t, true, node, redistest.NodeDir(), "workers.mjs", "redis://"+srv.Addr)
	var want map[string][]map[string]string
	if err := json.Unmarshal([]byte(fx.line), &want); err != nil {
		t.Fatalf("workers.mjs printed %q: %v", fx.line, err)
	}
	src := Source{Layout: BullMQ}
	got := readWorkers(t, src, rdb, []string{"work", "mail", "idle"}, time.Time{})
	var names, wantNames []string
	for _, w := range got.List {
		names = append(names, w.Queues[0]+" "+w.Identity+" "+w.Host)
		if w.Stale || w.Idle < 0 || w.State != "connected" {
			t.Fatalf("worker %+v: want connected, with an idle time, never stale", w)
		}
	}
	for q, clients := range want {
		for _, c := range clients {
			wantNames = append(wantNames, q+" "+c["rawname"]+" "+c["addr"])
		}
	}
	slices.Sort(names)
	slices.Sort(wantNames)
	if len(wantNames) != 2 || !slices.Equal(names, wantNames) || got.Found != 2 || len(got.Notes) == 0 {
		t.Fatalf("workers %v (%+v), want as getWorkers: %v", names, got, wantNames)
	}
	_ = fx.stdin.Close() // the fixture closes its workers
	if err := fx.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, "no worker listed once they closed", 10*time.Second, func() bool {
		return readWorkers(t, src, rdb, []string{"work", "mail"}, time.Time{}).Found == 0
	})
}

// Celery records no workers in Redis: a note says so, and the list is empty, not made up.
func TestWorkersCelery(t *testing.T) {
	srv := redistest.Start(t)
	got := readWorkers(t, Source{Layout: Celery}, srv.Client(t), []string{"celery"}, time.Time{})
	if len(got.List) != 0 || got.Found != 0 || len(got.Notes) != 1 {
		t.Fatalf("celery workers %+v, want a note and none", got)
	}
}

// A key of the wrong type ends the read with one line naming the command, the key and Redis'
// answer.
func TestWorkersWrongType(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	if err := rdb.Set(ctx, "rq:workers", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(ctx, "processes", "web:1:0123456789ab").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "web:1:0123456789ab", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src  Source
		want string
	}{
		{Source{Layout: RQ}, "store: rq workers: SSCAN rq:workers: WRONGTYPE"},
		{Source{Layout: Sidekiq}, "store: sidekiq workers: HMGET web:1:0123456789ab: WRONGTYPE"},
	} {
		_, err := c.src.Workers(ctx, rdb, nil, time.Time{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line starting %q", c.src.Layout, err, c.want)
		}
	}
}

// On a cluster, BullMQ's workers are found on the master where getWorkers finds them (it reads
// every node's CLIENT LIST and keeps the node with the most).
func TestWorkersBullMQCluster(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	c := redistest.StartCluster(t, 3)
	fx := startRunning(t, true, node, redistest.NodeDir(), "workers.mjs", "redis://"+c.Addrs[0], "--cluster")
	var want map[string][]map[string]string
	if err := json.Unmarshal([]byte(fx.line), &want); err != nil {
		t.Fatalf("workers.mjs printed %q: %v", fx.line, err)
	}
	got := readWorkers(t, Source{Layout: BullMQ, Prefix: "{bull}"}, c.Client(t), []string{"work", "mail"}, time.Time{})
	var names, wantNames []string
	for _, w := range got.List {
		names = append(names, w.Queues[0]+" "+w.Identity)
	}
	for q, clients := range want {
		for _, cl := range clients {
			wantNames = append(wantNames, q+" "+cl["rawname"])
		}
	}
	slices.Sort(names)
	slices.Sort(wantNames)
	if len(wantNames) < 2 || !slices.Equal(names, wantNames) {
		t.Fatalf("workers %v, want as getWorkers: %v", names, wantNames)
	}
}

// A user who may not run CLIENT LIST (as the read-only ACL rule leaves it out) gets one line
// saying so for BullMQ's workers, not an empty list.
func TestWorkersBullMQRefused(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "ro", "on", ">pw", "~*", "-@all", "+ping", "+hello", "+client|setname").Err(); err != nil {
		t.Fatal(err)
	}
	ro := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "ro", Password: "pw"})
	t.Cleanup(func() { ro.Close() })
	_, err := Source{Layout: BullMQ}.Workers(t.Context(), ro, []string{"work"}, time.Time{})
	if err == nil || !strings.HasPrefix(err.Error(), "store: bullmq workers: CLIENT LIST: NOPERM") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line: CLIENT LIST refused", err)
	}
}
