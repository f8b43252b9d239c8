package report

import (
	"fmt"
	"io"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeServer prints the server's health as INFO gave it around the sweep: each node's lines as
// the console's Server panel has them, the eviction risk with each library's requirement in its
// own words, and why a "?" is one.
func writeServer(out io.Writer, info *snapshot.ServerInfo) {
	if info == nil {
		return
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Server")
	if info.Err != "" {
		fmt.Fprintf(out, "  %s\n", info.Err)
		return
	}
	var text cells.Server
	if r := info.Eviction; r != nil {
		line, _ := cells.Risk(r, len(info.Nodes))
		fmt.Fprintf(out, "  WARNING: %s\n", line)
		for _, q := range r.Requirements {
			fmt.Fprintf(out, "    %s: %q (%s)\n", q.Who, q.Says, q.Source)
		}
	}
	for _, n := range cells.ByTrouble(info.Nodes) {
		if len(info.Nodes) > 1 {
			fmt.Fprintf(out, "  %s\n", text.MasterLine(&n, text.Policy(&n)))
			continue
		}
		for _, l := range text.NodeLines(&n, text.Policy(&n)) {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	for _, why := range text.Unknown {
		fmt.Fprintf(out, "  %s: %s\n", format.Unknown, why)
	}
}
