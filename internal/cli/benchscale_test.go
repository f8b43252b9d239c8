package cli

import (
	"strings"
	"testing"
)

// TestBenchScaleRefusals: bench --scale's sizes are bounded, and it refuses a given server (it
// writes millions of keys and runs on servers of its own), with exit 2 before anything starts.
func TestBenchScaleRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--scale", "--scale-keys", "10"}, "bench: --scale-keys 10 must be at least 100,000"},
		{[]string{"bench", "--scale", "--scale-keys", "1e9"}, "bench: --scale-keys 1e9 is not a whole number"},
		{[]string{"bench", "--scale", "--scale-cluster-keys", "-1"}, "bench: --scale-cluster-keys -1 must not be negative"},
		{[]string{"bench", "--scale", "--addr", "127.0.0.1:1", "--allow-writes"}, "bench --scale writes millions of keys and runs on servers of its own: give no --addr"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := hg(t, c.args...)
			if code != exitUsage || !strings.Contains(errOut, c.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 saying %q", code, out, errOut, c.want)
			}
		})
	}
}
