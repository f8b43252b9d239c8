package config

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// HostZone is this machine's zone (time.Local) under its IANA name, such as Asia/Shanghai. It reads
// the name from TZ, or else from where /etc/localtime points. It is nil when the name cannot be
// told or does not name the zone in use. discover proposes it, by name, for windows cut at its
// offset. (The name of time.Local itself is "Local", which would mean another zone on another
// machine.)
func HostZone() *time.Location {
	name, set := os.LookupEnv("TZ")
	if set {
		name = strings.TrimPrefix(name, ":")
		if name == "" {
			name = "UTC"
		}
	} else if target, err := os.Readlink("/etc/localtime"); err == nil {
		name = target
	}
	return hostZoneNamed(name, time.Now())
}

// hostZoneNamed loads name, an IANA name or a path into a zoneinfo directory. It returns the zone
// when it agrees with time.Local at now and around the year's turn, so a zone with another DST rule
// is not taken for it; else nil.
func hostZoneNamed(name string, now time.Time) *time.Location {
	if i := strings.LastIndex(name, "zoneinfo/"); i >= 0 {
		name = name[i+len("zoneinfo/"):]
	}
	if name == "" || name == "Local" || filepath.IsAbs(name) {
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	for _, at := range []time.Time{now, now.AddDate(0, 6, 0)} {
		_, a := at.In(loc).Zone()
		_, b := at.In(time.Local).Zone()
		if a != b {
			return nil
		}
	}
	return loc
}
