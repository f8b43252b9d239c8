package cli

import (
	"errors"
	"flag"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// errParsed ends a parse-only run (see parsed).
var errParsed = errors.New("flags parsed")

// FuzzFlags runs any command line (its arguments one a line, up to 64 of them) to the end of its
// parsing, never further: what is refused is refused with exit 2 and one line (after any of the
// config's warnings), within a few seconds; --help and help exit 0 with the usage on standard
// output; and what is accepted holds finite numbers, none negative, with the flags that set the
// config (--keys-per-second, --allow-writes, --addr) applied to it.
func FuzzFlags(f *testing.F) {
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\n")
		if len(line) > 4096 || len(args) > 64 {
			return
		}
		for _, a := range args {
			if strings.Contains(a, "/dev/") || strings.Contains(a, "/proc/") || strings.Contains(a, "/sys/") {
				return // --config and --merge read files: only those of the repository
			}
		}
		var fs *flag.FlagSet
		var cfg *config.Config
		reached := false
		ctx := withParseOnly(t.Context(), func(f *flag.FlagSet, c *config.Config) error {
			fs, cfg, reached = f, c, true
			return errParsed
		})
		var out, errOut syncBuffer
		code := -1
		done := make(chan struct{})
		go func() {
			defer close(done)
			code = Run(ctx, redistest.Shipped(t), args, &out, &errOut)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: still parsing after 5 s", args)
		}
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		last := lines[len(lines)-1]
		for _, l := range lines[:len(lines)-1] {
			if !strings.HasPrefix(l, "hourglass: warning: ") {
				t.Fatalf("%q: exit %d; a line on stderr before the last that is not a warning: %q", args, code, l)
			}
		}
		switch {
		case reached:
			if code != exitRuntime || last != "hourglass: "+errParsed.Error() {
				t.Fatalf("%q: parsed, then exit %d with %q", args, code, last)
			}
			checkAccepted(t, args, fs, cfg)
		case code == exitOK:
			if errOut.String() != "" || out.String() == "" {
				t.Fatalf("%q: exit 0 without usage, or with %q on stderr", args, errOut.String())
			}
		case code == exitUsage:
			if !strings.HasPrefix(last, "hourglass: ") || strings.HasPrefix(last, "hourglass: warning: ") {
				t.Fatalf("%q: exit 2 with %q", args, errOut.String())
			}
		default:
			t.Fatalf("%q: exit %d while parsing flags: %q", args, code, errOut.String())
		}
	})
}

// checkAccepted holds the flags a command accepted to finite numbers, none negative, and the
// config to the flags that set it.
func checkAccepted(t *testing.T, args []string, fs *flag.FlagSet, cfg *config.Config) {
	t.Helper()
	fs.Visit(func(fl *flag.Flag) {
		if addrs, ok := fl.Value.(*stringList); ok && fl.Name == "addr" && cfg != nil && !slices.Equal(cfg.Redis.Addrs, []string(*addrs)) {
			t.Fatalf("%q: --addr %q, but the config connects to %q", args, *addrs, cfg.Redis.Addrs)
		}
		g, ok := fl.Value.(flag.Getter)
		if !ok {
			return
		}
		bad := false
		switch v := g.Get().(type) {
		case int:
			bad = v < 0
		case int64:
			bad = v < 0
		case float64:
			bad = !(v >= 0) || math.IsInf(v, 0)
		case time.Duration:
			bad = v < 0
		}
		if bad {
			t.Fatalf("%q: --%s %v accepted", args, fl.Name, g.Get())
		}
		switch v := g.Get(); {
		case cfg == nil:
		case fl.Name == "keys-per-second" && v != cfg.Scan.KeysPerSecond:
			t.Fatalf("%q: --keys-per-second %v, but the sweep's budget is %d", args, v, cfg.Scan.KeysPerSecond)
		case fl.Name == "allow-writes" && v == true && !cfg.Redis.AllowWrites:
			t.Fatalf("%q: --allow-writes, but the config does not allow writes", args)
		}
	})
}
