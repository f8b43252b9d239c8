package console

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/target"
)

// TestInjectSaysWhatWasWritten: the console's i writes a burst and says how many events went in;
// as a user without the right to run the script it says, without retrying the refusal for 30 s,
// that none of them were written and why, in inject's own line (command, key, user), never a
// count of pairs "not written" that Redis may hold.
func TestInjectSaysWhatWasWritten(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "noeval", "on", ">pw", "~*", "+@all", "-evalsha", "-eval").Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr, wantText, wantErr string
	}{
		{srv.Addr, `^injected 1,000 events into ad_revenue \(\d+ script calls\)$`, ""},
		{"redis://noeval:pw@" + srv.Addr, "", `^0 of 1,000 events written into ad_revenue; EVALSHA on key "[^"]+" as user "noeval": NOPERM .*; \d+ key pairs not written$`},
	} {
		cfg := config.Builtin(redistest.Shipped(t))
		cfg.Redis.Addrs, cfg.Redis.AllowWrites = []string{c.addr}, true
		tg, err := target.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		acts := newConsoleActions(t.Context(), tg, func() *config.Config { return cfg })
		start := time.Now()
		text, err := acts.Inject(t.Context(), "ad_revenue", 1000)
		took := time.Since(start)
		acts.stop()
		tg.Close()
		switch {
		// Liveness: ten times the second a refusal ends inject in, a third of the 30 s a retried
		// fault takes.
		case took > 10*time.Second:
			t.Errorf("%s: inject took %v", c.addr, took)
		case c.wantErr == "" && (err != nil || !regexp.MustCompile(c.wantText).MatchString(text)):
			t.Errorf("%s: %q, %v; want %s", c.addr, text, err, c.wantText)
		case c.wantErr != "" && (err == nil || !regexp.MustCompile(c.wantErr).MatchString(err.Error()) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %q, %v; want the error %s", c.addr, text, err, c.wantErr)
		}
	}
}
