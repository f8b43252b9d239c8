package jobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// Sidekiq's and BullMQ's requirements quote the libraries' own code as installed: Sidekiq's
// startup warning and BullMQ's connection check.
func TestEvictionNeedQuotesTheLibrary(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	dir, err := exec.Command(ruby, "-e", `print Gem::Specification.find_by_name("sidekiq").gem_dir`).Output()
	if err != nil {
		t.Fatal(err)
	}
	cli := readSpaced(t, filepath.Join(string(dir), "lib", "sidekiq", "cli.rb"))
	sk, _ := Sidekiq.EvictionNeed()
	if !strings.Contains(cli, sk.Says) {
		t.Errorf("Sidekiq's cli.rb does not say %q", sk.Says)
	}
	redistest.Interpreter(t, "node", "bullmq")
	conn := readSpaced(t, filepath.Join(redistest.NodeDir(), "node_modules", "bullmq", "dist", "cjs", "classes", "redis-connection.js"))
	bq, _ := BullMQ.EvictionNeed()
	_, quoted, _ := strings.Cut(bq.Source, "its connection warns: ")
	if quoted == "" || !strings.Contains(conn, quoted) {
		t.Errorf("BullMQ's redis-connection.js does not warn %q", quoted)
	}
	for _, l := range []Layout{Sidekiq, BullMQ, RQ, Celery, Asynq} {
		if need, ok := l.EvictionNeed(); !ok || need.Who == "" || need.Brief == "" || need.Says == "" || need.Source == "" {
			t.Errorf("%s: %+v", l, need)
		}
	}
}

// readSpaced reads a file with each run of white space made one space.
func readSpaced(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}
