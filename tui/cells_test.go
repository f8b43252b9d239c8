package tui

import (
	"testing"
	"time"
)

func TestAgoNeverNegative(t *testing.T) {
	if got := ago(-5 * time.Second); got != "0s" {
		t.Errorf("ago(-5s) = %q, want 0s: an age never reads negative", got)
	}
}
