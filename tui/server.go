package tui

import (
	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The server's health as the header and the Overview's Server panel show it, its text from
// internal/cells. On a cluster the panel has one line a master, the worst first, and the header
// speaks of the worst with the count.

// health is a ServerInfo drawn for the console.
type health struct {
	c    *console
	info snapshot.ServerInfo
	text cells.Server
}

func newHealth(c *console) *health { return &health{c: c, info: c.status.Server} }
