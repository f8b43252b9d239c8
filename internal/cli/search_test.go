package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestSearchCommand: `hourglass search` prints exactly the tasks asynq's own client enqueued
// whose payload field matches, one line each, with a summary over every task on stderr; a bad
// query or layout is a usage error.
func TestSearchCommand(t *testing.T) {
	srv := redistest.Start(t)
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	want := map[string]bool{}
	for i := range 600 {
		user := 1000 + i
		if i%200 == 9 {
			user = 42
		}
		info, err := client.Enqueue(asynq.NewTask("mail", []byte(fmt.Sprintf(`{"user_id":%d}`, user))))
		if err != nil {
			t.Fatal(err)
		}
		if user == 42 {
			want[info.ID] = true
		}
	}
	code, out, errOut := hg(t, "search", "--addr", srv.Addr, "--layout", "asynq", "--queue", "default", "--match", "data.user_id=42",
		"--keys-per-second", "100000")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 3 || !strings.Contains(errOut, "3 matches for data.user_id=42 in 600 tasks") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || f[0] != "waiting" || !want[f[2]] || f[3] != `mail {"user_id":42}` {
			t.Errorf("line %q", l)
		}
	}
	for _, args := range [][]string{
		{"--layout", "asynq", "--queue", "default", "--match", `""`},
		{"--layout", "nope", "--queue", "default", "--match", "x"},
		{"--layout", "asynq", "--match", "x"},
		{"--layout", "asynq", "--queue", "default", "--match", "x", "--section", "nope"},
	} {
		if code, _, errOut := hg(t, append([]string{"search", "--addr", srv.Addr}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
