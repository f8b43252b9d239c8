package store

import (
	"fmt"
	"strconv"
	"strings"
)

// CommandStat is one line of INFO commandstats: how many calls of a command Redis has run, and
// the microseconds it spent on them.
type CommandStat struct {
	Calls int64
	Usec  int64
}

// ParseCommandStats reads INFO commandstats' lines
// ("cmdstat_scan:calls=130,usec=212693,usec_per_call=1636.10,..."), by command name ("scan",
// "memory|usage").
func ParseCommandStats(text string) map[string]CommandStat {
	out := map[string]CommandStat{}
	for line := range strings.SplitSeq(text, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var s CommandStat
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				s.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				s.Usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[name] = s
	}
	return out
}

// statContainers are the commands INFO commandstats files by subcommand ("memory|usage").
var statContainers = map[string]bool{"acl": true, "client": true, "cluster": true, "command": true, "config": true,
	"function": true, "latency": true, "memory": true, "module": true, "object": true, "pubsub": true,
	"script": true, "slowlog": true, "xinfo": true, "xgroup": true}

// CommandStatName is the name INFO commandstats files a command with these arguments under.
func CommandStatName(args []any) string {
	if len(args) == 0 {
		return ""
	}
	name := strings.ToLower(fmt.Sprint(args[0]))
	if statContainers[name] && len(args) > 1 {
		name += "|" + strings.ToLower(fmt.Sprint(args[1]))
	}
	return name
}
