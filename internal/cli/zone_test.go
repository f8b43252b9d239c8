package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// zoneChildArgs, in the environment of this test binary run again, is the command TestZoneChild
// runs (its arguments separated by \x1f), under the TZ the parent set: time.Local is read from TZ
// once, when the process starts, so another zone needs another process.
const zoneChildArgs = "HOURGLASS_ZONE_CHILD_ARGS"

// TestZoneChild runs one command as the zone tests ask, and exits with its code.
func TestZoneChild(t *testing.T) {
	args := os.Getenv(zoneChildArgs)
	if args == "" {
		t.Skip("run by the zone tests, under another TZ")
	}
	os.Exit(Run(context.Background(), redistest.Shipped(t), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// underTZ runs hourglass args in a process whose zone is tz.
func underTZ(t *testing.T, tz string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestZoneChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TZ="+tz, zoneChildArgs+"="+strings.Join(args, "\x1f"))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// zoneKeys writes, at the server's clock, pv:<site> and clicks:<site> counters whose hour and day
// windows are named in UTC, and cn:<site> counters named in UTC+8, each with the hours before,
// and returns the current hour's name in UTC.
func zoneKeys(t *testing.T, srv *redistest.Server) string {
	t.Helper()
	rdb := srv.Client(t)
	ctx := t.Context()
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	pipe := rdb.Pipeline()
	for _, site := range []string{"a", "b", "c", "d"} {
		for h := range 4 {
			utc := now.UTC().Add(-time.Duration(h) * time.Hour)
			cn := now.UTC().Add(8*time.Hour - time.Duration(h)*time.Hour)
			for _, k := range []string{"pv:" + site + ":" + utc.Format("2006010215"), "clicks:" + site + ":" + utc.Format("2006010215"),
				"cn:" + site + ":" + cn.Format("2006010215")} {
				pipe.IncrBy(ctx, k, int64(10+h))
				pipe.Expire(ctx, k, 48*time.Hour)
			}
		}
		pipe.IncrBy(ctx, "pv:"+site+":"+now.UTC().Format("20060102"), 50)
		pipe.Expire(ctx, "pv:"+site+":"+now.UTC().Format("20060102"), 30*24*time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return now.UTC().Format("2006010215")
}

// The case, as it was found: windows written in UTC, a config whose timezone is "Local",
// hourglass run on a machine in Asia/Shanghai. The snapshot's text and JSON say the windows look
// cut in UTC; discover, run there or in Los Angeles, proposes UTC for them, and for windows
// written at UTC+8 the host's zone by name where it is at that offset, else "+08:00".
func TestZoneUnderAnotherTZ(t *testing.T) {
	srv := redistest.Start(t)
	redistest.ClearOfHourEnd(t, time.Minute)
	hour := zoneKeys(t, srv)
	path := writeConfig(t, "local.toml", fmt.Sprintf("timezone = \"Local\"\n[redis]\naddrs = [%q]\n\n"+
		"[[counter]]\nname = \"pv\"\npattern = \"pv:<site>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n"+
		"day_format = \"yyyyMMdd\"\nday_retention = \"30d\"\n", srv.Addr))

	code, out, errOut := underTZ(t, "Asia/Shanghai", "snapshot", "--config", path)
	want := fmt.Sprintf(`windows look cut in UTC+00:00, not in Asia/Shanghai (+08:00): the newest hour window %s is the current hour at UTC+00:00; set timezone = "UTC"`, hour)
	if code != exitOK || !strings.Contains(out, "\nwarning: counter family pv: "+want+"\n") || !strings.Contains(out, "\n  warning: "+want+"\n") {
		t.Errorf("snapshot under TZ=Asia/Shanghai: exit %d, want %q at the top and in the family's section:\n%s%s", code, want, out, errOut)
	}
	// The hour read is not the one being written, so its figures are not 0 but unknown.
	if !regexp.MustCompile(`(?m)^pv +\S+ +\? zone `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  hour \(current\) +\? +\? +not read: the windows look cut in another zone$`).MatchString(out) {
		t.Errorf("snapshot under TZ=Asia/Shanghai: pv's current hour is not shown as unknown:\n%s", out)
	}
	code, out, errOut = underTZ(t, "Asia/Shanghai", "snapshot", "--json", "--config", path)
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); code != exitOK || err != nil {
		t.Fatalf("snapshot --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	z := snap.Family("pv").ZoneMismatch
	if z == nil || z.Data != "UTC" || z.Offset != "+00:00" || z.Hours != -8 || z.Newest != hour || len(snap.Warnings) != 1 {
		t.Errorf("pv's zone_mismatch %+v, warnings %q", z, snap.Warnings)
	}
	// Nor is the hour's average 0: it is the average of a window read under the wrong name.
	if f := snap.Family("pv"); f.HourAvgPerSec != nil || !strings.Contains(f.HourAvgNote, "windows look cut in") {
		t.Errorf("pv's hour average %v (%q) under a zone the data contradicts, want null with the reason", f.HourAvgPerSec, f.HourAvgNote)
	}

	// The same config in UTC agrees with the data: no warning.
	if code, out, _ := underTZ(t, "UTC", "snapshot", "--config", path); code != exitOK || strings.Contains(out, "windows look cut") {
		t.Errorf("snapshot under TZ=UTC: exit %d:\n%s", code, out)
	}

	for tz, cn := range map[string]string{"Asia/Shanghai": "Asia/Shanghai", "America/Los_Angeles": "+08:00"} {
		code, out, errOut := underTZ(t, tz, "discover", "--addr", srv.Addr)
		if code != exitOK {
			t.Fatalf("discover under TZ=%s: exit %d: %s", tz, code, errOut)
		}
		if !strings.Contains(out, "\ntimezone = \"UTC\"\n") || strings.Count(out, "\ntimezone = ") != 2 ||
			!regexp.MustCompile(`(?s)pattern = "cn:<\w+>:<window>"\nhour_format = "yyyyMMddHH"\nhour_retention = "\w+"\ntimezone = "`+regexp.QuoteMeta(cn)+`"\n`).MatchString(out) ||
			!strings.Contains(out, fmt.Sprintf("zone: newest hour window %s is the current hour at UTC+00:00", hour)) {
			t.Errorf("discover under TZ=%s: want timezone UTC at the top and %q for cn only:\n%s", tz, cn, out)
		}
	}
}

// serve's metrics say so too: hourglass_family_zone_mismatch is 1 for a family whose config
// names the wrong zone, 0 for one that names the right.
func TestZoneMismatchMetric(t *testing.T) {
	srv := redistest.Start(t)
	redistest.ClearOfHourEnd(t, time.Minute)
	zoneKeys(t, srv)
	path := writeConfig(t, "shanghai.toml", fmt.Sprintf("timezone = \"Asia/Shanghai\"\n[redis]\naddrs = [%q]\n\n"+
		"[[counter]]\nname = \"pv\"\npattern = \"pv:<site>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n\n"+
		"[[counter]]\nname = \"cn\"\npattern = \"cn:<site>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n", srv.Addr))
	want := []string{`hourglass_family_zone_mismatch{family="pv",target="` + srv.Addr + `"} 1`,
		`hourglass_family_zone_mismatch{family="cn",target="` + srv.Addr + `"} 0`}
	body := startServe(t, "--config", path).until("the zone gauges", 10*time.Second, func(body string) bool {
		return strings.Contains(body, want[0]) && strings.Contains(body, want[1])
	})
	if strings.Contains(body, `hourglass_family_zone_mismatch{family="flow"`) {
		t.Errorf("a family of another config is in the series:\n%s", body)
	}
}
