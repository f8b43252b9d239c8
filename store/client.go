package store

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Target says where Redis is: one address for a standalone server, several for a Cluster.
type Target struct {
	Addrs    []string // host:port
	Username string
	Password string
	DB       int
	TLS      *tls.Config // nil for plain TCP
}

// ParseTarget reads addresses given as host:port or redis:// and rediss:// URLs. Credentials in
// a URL win over username and password; the first URL's settings stand for a cluster's nodes.
func ParseTarget(addrs []string, username, password string) (Target, error) {
	t := Target{Username: username, Password: password}
	for i, a := range addrs {
		if !strings.Contains(a, "://") {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return Target{}, fmt.Errorf("address %q: want host:port or a redis:// URL", RedactAddr(a))
			}
			t.Addrs = append(t.Addrs, a)
			continue
		}
		o, err := redis.ParseURL(a)
		if err != nil {
			return Target{}, fmt.Errorf("address %q: %s", RedactAddr(a), RedactIn(err.Error(), a))
		}
		t.Addrs = append(t.Addrs, o.Addr)
		if i == 0 {
			if o.Username != "" {
				t.Username = o.Username
			}
			if o.Password != "" {
				t.Password = o.Password
			}
			t.DB, t.TLS = o.DB, o.TLSConfig
		}
	}
	if len(t.Addrs) == 0 {
		return Target{}, fmt.Errorf("no address")
	}
	return t, nil
}

// Cluster reports whether the target is a Redis Cluster (several seed addresses).
func (t Target) Cluster() bool { return len(t.Addrs) > 1 }

// Mode is "cluster" or "standalone".
func (t Target) Mode() string {
	if t.Cluster() {
		return "cluster"
	}
	return "standalone"
}

// NewClient returns a client for the target. Timeouts are short so a console notices a Redis that
// went away within seconds.
func (t Target) NewClient() redis.UniversalClient {
	const dial, io = 2 * time.Second, 3 * time.Second
	if t.Cluster() {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: t.Addrs, Username: t.Username, Password: t.Password, TLSConfig: t.TLS,
			DialTimeout: dial, ReadTimeout: io, WriteTimeout: io,
		})
	}
	return redis.NewClient(&redis.Options{
		Addr: t.Addrs[0], Username: t.Username, Password: t.Password, DB: t.DB, TLSConfig: t.TLS,
		DialTimeout: dial, ReadTimeout: io, WriteTimeout: io,
	})
}

// RedactAddr hides the password of a redis:// or rediss:// URL, so an address can be shown in
// errors and headers: "redis://app:s3cret@h:6379" becomes "redis://app:xxxxx@h:6379".
func RedactAddr(a string) string {
	if p := urlPassword(a); p != "" {
		return strings.Replace(a, ":"+p+"@", ":xxxxx@", 1)
	}
	return a
}

// RedactIn hides the password of address a wherever it appears in msg (URL parse errors quote
// the whole URL).
func RedactIn(msg, a string) string {
	if p := urlPassword(a); p != "" {
		return strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// urlPassword is the password part of a URL's user info, or "".
func urlPassword(a string) string {
	_, rest, ok := strings.Cut(a, "://")
	if !ok {
		return ""
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	_, pass, _ := strings.Cut(rest[:at], ":")
	return pass
}
