package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TrafficNews of the fake has nothing to say: the tests hand the model trafficMsgs themselves.
func (a *fakeActions) TrafficNews(ctx context.Context) []TrafficNews {
	<-ctx.Done()
	return nil
}

// A failing test traffic's fault stays in the status line while it lasts (an action's outcome
// after it shows first, for a while), and its end is said.
func TestTrafficFaultsShowInTheStatusLine(t *testing.T) {
	acts := &fakeActions{}
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, 160, 36)
	poll(t, m)
	press(m, "t")
	m.flashAt = clock.Add(-time.Minute) // the fault came after "t" said the traffic started
	nope := errors.New("NOPERM User writer has no permissions to run the 'evalsha' command")
	m.Update(trafficMsg{news: []TrafficNews{{Family: "flow", Err: nope, Since: clock.Add(-3 * time.Second)}}})
	footer := func() string {
		lines := strings.Split(screen(m), "\n")
		return lines[len(lines)-1]
	}
	if f := footer(); !strings.Contains(f, "traffic into flow (retrying, failing for 3s): NOPERM User writer") {
		t.Fatalf("the status line while the traffic fails: %q", f)
	}
	m.flashf("injected 1000 events into ad_revenue")
	if f := footer(); !strings.Contains(f, "injected 1000") {
		t.Fatalf("an outcome after the fault does not show first: %q", f)
	}
	m.flashAt = clock.Add(-time.Minute) // the outcome has had its time
	if f := footer(); !strings.Contains(f, "NOPERM") {
		t.Fatalf("the fault did not come back to the status line: %q", f)
	}
	m.Update(trafficMsg{news: []TrafficNews{{Family: "flow", Since: clock.Add(-12 * time.Second)}}})
	if f := footer(); !strings.Contains(f, "traffic into flow: writes go through again, after 12s of errors") {
		t.Fatalf("the status line once writes go through again: %q", f)
	}
	m.Update(trafficMsg{news: []TrafficNews{{Family: "flow", Err: nope, Since: clock, Ended: true}}})
	if f := footer(); !strings.Contains(f, "test traffic into flow stopped: NOPERM") || m.traffic["flow"] {
		t.Fatalf("a traffic that ended by itself: %q (still marked running: %v)", f, m.traffic["flow"])
	}
	if strings.Contains(strings.Split(screen(m), "\n")[0], "test traffic: flow") {
		t.Error("the header still shows the ended traffic as running")
	}
	// News of a traffic the operator stopped is old: it is dropped.
	press(m, "t")
	press(m, "t")
	m.Update(trafficMsg{news: []TrafficNews{{Family: "flow", Err: nope, Since: clock}}})
	if _, n := m.trafficFault(); n.Err != nil {
		t.Error("the news of a stopped traffic was kept")
	}
}
