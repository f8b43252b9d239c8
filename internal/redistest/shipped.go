package redistest

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// shipped reads the config.toml at the module's root once: the file the root package embeds and
// the binary runs with when no config is given.
var shipped = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return os.ReadFile(filepath.Join(dir, "config.toml"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
})

// Shipped returns the text of the shipped config.toml, the one the binary is built with, for
// tests that run what a user runs with no config of their own. Each call returns a copy.
func Shipped(tb testing.TB) []byte {
	tb.Helper()
	text, err := shipped()
	if err != nil {
		tb.Fatalf("reading the shipped config.toml: %v", err)
	}
	return append([]byte(nil), text...)
}
