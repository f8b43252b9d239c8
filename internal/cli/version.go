package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

const versionUsage = `Usage: hourglass version

Prints the version of hourglass, the revision of its source it was built from, and the Go
release that built it, as the binary's build information records them. A binary built without
version control information (go run, or a build outside a checkout) says so.
`

// cmdVersion is `hourglass version` (and `hourglass --version`).
func cmdVersion(_ context.Context, _ []byte, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version", versionUsage, stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{GoVersion: runtime.Version()}
	}
	fmt.Fprint(stdout, versionText(info))
	return nil
}

// versionText is what version prints of info: three lines, the version, the revision and the Go
// release with the platform.
func versionText(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" || version == "(devel)" {
		version = "(devel): no release version recorded"
	}
	setting := map[string]string{}
	for _, s := range info.Settings {
		setting[s.Key] = s.Value
	}
	revision := "unknown: built without version control information"
	if rev := setting["vcs.revision"]; rev != "" {
		var notes []string
		if t := setting["vcs.time"]; t != "" {
			notes = append(notes, "committed "+t)
		}
		if setting["vcs.modified"] == "true" {
			notes = append(notes, "with uncommitted changes")
		}
		revision = rev
		if len(notes) > 0 {
			revision += " (" + strings.Join(notes, ", ") + ")"
		}
	}
	return fmt.Sprintf("hourglass %s\nrevision  %s\ngo        %s %s/%s\n", version, revision, info.GoVersion, runtime.GOOS, runtime.GOARCH)
}
