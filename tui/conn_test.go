package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// The header renders what the source says of the connection: unreachable, a refusal naming the
// command, another permanent error's line, a late sweep with how long it has stalled, and
// connected again once the fault passes.
func TestHeaderTellsFaultsApart(t *testing.T) {
	src := &fakeSource{status: testStatus(t)}
	m := newTestModel(t, src, nil, 160, 36)
	poll(t, m)
	header := func() string { // the line with the clock, below the banner when there is one
		for _, l := range strings.Split(screen(m), "\n") {
			if strings.Contains(l, "09:30:00 UTC") {
				return l
			}
		}
		return ""
	}
	fail := func(err error, cs snapshot.ConnState) {
		t.Helper()
		src.err, src.status = err, snapshot.Status{Conn: cs}
		poll(t, m)
	}
	for _, c := range []struct {
		name   string
		err    error
		cs     snapshot.ConnState
		header string
		banner string
	}{
		{"refused connection", errors.New("dial tcp 10.0.0.5:6379: connect: connection refused"),
			snapshot.ConnState{Condition: snapshot.Unreachable, Class: store.ClassTransient},
			"● unreachable", "Redis unreachable · retry in"},
		{"a source that does not say", errors.New("i/o timeout"), snapshot.ConnState{},
			"● unreachable", "Redis unreachable · retry in"},
		{"scan refused", errors.New("SCAN as user \"noscan\": NOPERM User noscan has no permissions to run the 'scan' command"),
			snapshot.ConnState{Condition: snapshot.Denied, Class: store.ClassPermanent, Refused: "scan"},
			"● permission denied: scan", "permission denied: scan · retry in"},
		{"another permanent error", errors.New("WRONGPASS invalid username-password pair or user is disabled."),
			snapshot.ConnState{Condition: snapshot.Failing, Class: store.ClassPermanent},
			"● WRONGPASS invalid username-password pair", "Redis refused the sweep"},
	} {
		fail(c.err, c.cs)
		if h := header(); !strings.Contains(h, c.header) || strings.Contains(h, "disconnected") {
			t.Errorf("%s: header %q, want %q", c.name, h, c.header)
		}
		if b := strings.Split(screen(m), "\n")[0]; !strings.Contains(b, c.banner) {
			t.Errorf("%s: banner %q, want %q", c.name, b, c.banner)
		}
	}

	// Redis answers, but the sweep has not completed for 14 s past its usual time.
	late := testStatus(t)
	late.Conn = snapshot.ConnState{Condition: snapshot.Late, LastSweep: clock.Add(-14 * time.Second), LateAfter: 10 * time.Second}
	src.err, src.status = nil, late
	poll(t, m)
	if h := header(); !strings.Contains(h, "● connected but the sweep is late (stalled 14s)") {
		t.Errorf("late sweep: header %q", h)
	}
	src.status = testStatus(t)
	poll(t, m)
	if h := header(); !strings.Contains(h, "● connected") || strings.Contains(h, "late") {
		t.Errorf("after the fault passed: header %q", h)
	}
}

// After a failover the header names the new primary and how long ago it moved, for a minute;
// the figures stay on screen meanwhile.
func TestHeaderSaysFailover(t *testing.T) {
	st := testStatus(t)
	src := &fakeSource{status: st}
	m := newTestModel(t, src, nil, 160, 36)
	poll(t, m)
	if s := screen(m); strings.Contains(s, "failover") {
		t.Fatalf("a header before any failover mentions one:\n%s", s)
	}
	st.Conn = snapshot.ConnState{Primary: "127.0.0.1:6381", FailoverAt: clock.Add(-4 * time.Second)}
	src.status = st
	poll(t, m)
	s := screen(m)
	if !strings.Contains(strings.Split(s, "\n")[1], "● connected  ·  failover: primary now 127.0.0.1:6381 (4s ago)") {
		t.Fatalf("header after a failover:\n%s", s)
	}
	if !strings.Contains(s, "Unclaimed keys 49,866") {
		t.Errorf("the figures are gone after a failover:\n%s", s)
	}
	st.Conn.FailoverAt = clock.Add(-2 * time.Minute)
	src.status = st
	poll(t, m)
	if s := screen(m); strings.Contains(s, "failover") {
		t.Errorf("the header still says a failover two minutes on:\n%s", s)
	}
}

// With read_from = replica the header's first line says which replica the sweep reads, how
// far behind it is, the replicas left and why, and reads moved to the primary in capitals.
func TestHeaderSaysWhereReadsGo(t *testing.T) {
	st := testStatus(t)
	src := &fakeSource{status: st}
	m := newTestModel(t, src, nil, 160, 36)
	for _, c := range []struct {
		reads *snapshot.ReadState
		want  string
	}{
		{nil, ""},
		{&snapshot.ReadState{Replica: "127.0.0.1:6380"}, "reads: replica 127.0.0.1:6380"},
		{&snapshot.ReadState{Replica: "127.0.0.1:6381", Lag: 3 * time.Second, Left: []string{"127.0.0.1:6380 promoted"}},
			"reads: replica 127.0.0.1:6381, 3s behind (left 127.0.0.1:6380 promoted)"},
		{&snapshot.ReadState{Left: []string{"127.0.0.1:6380 promoted", "127.0.0.1:6381 link down"}},
			"PRIMARY reads: 127.0.0.1:6380 promoted, 127.0.0.1:6381 link down"},
	} {
		st.Conn = snapshot.ConnState{Reads: c.reads}
		src.status = st
		poll(t, m)
		line := strings.Split(screen(m), "\n")[0]
		if c.want == "" && strings.Contains(line, "reads") || !strings.Contains(line, c.want) {
			t.Errorf("reads %+v: header %q, want %q", c.reads, line, c.want)
		}
	}
}
