package infer

import (
	"strings"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/store"
)

// Connection is the [redis] table of the target: its addresses as given, with any URL's password
// left out, and the settings that reach it again, never a password.
func Connection(rc config.RedisConfig, insecure, embedded bool) discover.Connection {
	c := discover.Connection{Name: rc.Name, Username: rc.Username, PasswordEnv: rc.PasswordEnv,
		TLSCA: rc.TLS.CA, TLSCert: rc.TLS.Cert, TLSKey: rc.TLS.Key, Addrs: []string{},
		SentinelMaster: rc.Sentinel.Master, SentinelAddrs: rc.Sentinel.Addrs,
		SentinelUsername: rc.Sentinel.Username, SentinelPasswordEnv: rc.Sentinel.PasswordEnv}
	stripped := false
	for _, a := range rc.Addrs {
		s := withoutPassword(a)
		stripped = stripped || s != a
		c.Addrs = append(c.Addrs, s)
	}
	if stripped {
		c.Notes = append(c.Notes, "The password of an address is left out: hourglass reads it from password_env, or")
		c.Notes = append(c.Notes, "REDISCLI_AUTH when that is not set.")
	}
	if insecure {
		c.Notes = append(c.Notes, "This sweep ran with --insecure, which is never read from a file: give it again.")
	}
	if embedded {
		c.Notes = append(c.Notes, "addrs = [] is the embedded Redis, with demo data: give your Redis's address instead.")
	}
	return c
}

// withoutPassword is a redis:// or rediss:// address with its password taken out (the user kept,
// the rest as written); any other address as it is.
func withoutPassword(a string) string {
	r := store.RedactAddr(a)
	if r == a {
		return a // no password in it
	}
	return strings.Replace(strings.Replace(r, ":xxxxx@", "@", 1), "://@", "://", 1)
}
