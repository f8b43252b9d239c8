package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Target says where Redis is: one address for a standalone server (or one node of a Cluster,
// when ClusterMode says so), several for a Cluster's seed nodes.
type Target struct {
	Addrs       []string // host:port
	Username    string
	Password    string
	DB          int
	TLS         *tls.Config // nil for plain TCP
	ClusterMode bool        // a Cluster: set for several addresses, or by whoever found out
	// Sentinel, when set, finds the primary through Sentinels: Addrs are theirs, and Username
	// and Password the data nodes'.
	Sentinel *Sentinel
}

// ParseTarget reads addresses given as host:port or redis:// and rediss:// URLs, or one
// redis-sentinel:// URL. Credentials in a URL win over username and password; the first URL's
// settings stand for a cluster's nodes. Errors never show a URL's password.
func ParseTarget(addrs []string, username, password string) (Target, error) {
	t := Target{Username: username, Password: password, ClusterMode: len(addrs) > 1}
	for i, a := range addrs {
		shown := RedactAddr(a)
		hostPort := a
		if IsSentinelAddr(a) {
			if len(addrs) > 1 {
				return Target{}, fmt.Errorf("bad addr %q: a Sentinel URL is the only address (list its Sentinels in it, comma-separated)", shown)
			}
			st, err := parseSentinelURL(a)
			if err == nil && st.Username == "" && st.Password == "" {
				st.Username, st.Password = username, password
			}
			return st, err
		}
		if strings.Contains(a, "://") {
			if !strings.HasPrefix(a, "redis://") && !strings.HasPrefix(a, "rediss://") {
				return Target{}, fmt.Errorf("bad addr %q: a URL must start with redis://, rediss:// or redis-sentinel://", shown)
			}
			o, err := redis.ParseURL(a)
			if err != nil {
				return Target{}, fmt.Errorf("bad addr %q: %s", shown, RedactIn(err.Error(), a))
			}
			hostPort = o.Addr
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
		host, port, err := net.SplitHostPort(hostPort)
		if err != nil || host == "" {
			return Target{}, fmt.Errorf("bad addr %q (want host:port, e.g. 127.0.0.1:6379, or a redis:// URL)", shown)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return Target{}, fmt.Errorf("bad addr %q: port %q is not a number from 1 to 65535", shown, port)
		}
		t.Addrs = append(t.Addrs, hostPort)
	}
	if len(t.Addrs) == 0 {
		return Target{}, fmt.Errorf("no address")
	}
	return t, nil
}

// Cluster reports whether the target is a Redis Cluster.
func (t Target) Cluster() bool { return t.ClusterMode }

// Mode is "cluster", "sentinel" or "standalone".
func (t Target) Mode() string {
	switch {
	case t.Cluster():
		return "cluster"
	case t.Sentinel != nil:
		return "sentinel"
	}
	return "standalone"
}

// NewClient returns a client for the target. Timeouts are short, so a console notices within
// seconds that Redis went away. A refused dial is not tried again inside one command. (go-redis
// would make five attempts for each of a command's four tries, holding a poll for seconds while the
// console still says connected.) The caller's own retries, with their backoff shown, take over at
// once.
func (t Target) NewClient() redis.UniversalClient {
	const dial, io, dialAttempts = 2 * time.Second, 3 * time.Second, 1
	if t.Sentinel != nil {
		return t.newFailoverClient(dial, io, dialAttempts)
	}
	if t.Cluster() {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: t.Addrs, Username: t.Username, Password: t.Password, TLSConfig: t.TLS,
			DialTimeout: dial, ReadTimeout: io, WriteTimeout: io, DialerRetries: dialAttempts,
		})
	}
	return redis.NewClient(&redis.Options{
		Addr: t.Addrs[0], Username: t.Username, Password: t.Password, DB: t.DB, TLSConfig: t.TLS,
		DialTimeout: dial, ReadTimeout: io, WriteTimeout: io, DialerRetries: dialAttempts,
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

// RedactAddrs lists addresses for a message, comma-separated, with any URL password hidden.
func RedactAddrs(addrs []string) string {
	shown := make([]string, len(addrs))
	for i, a := range addrs {
		shown[i] = RedactAddr(a)
	}
	return strings.Join(shown, ",")
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

// TLSFiles are the files of a TLS connection: the CA that signed the server's certificate (the
// system's roots when empty), and a client certificate and key for servers that ask for one.
type TLSFiles struct {
	CA, Cert, Key string
	// Insecure skips verifying the server's certificate: for a test server only, and only when
	// the operator asks by flag.
	Insecure bool
}

// Any reports whether any TLS setting is given.
func (f TLSFiles) Any() bool { return f.CA != "" || f.Cert != "" || f.Key != "" || f.Insecure }

// UseTLS turns TLS on for the target (a rediss:// URL already has it) with files' settings.
func (t *Target) UseTLS(files TLSFiles) error {
	cfg := t.TLS
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		cfg = cfg.Clone()
	}
	// Through Sentinel the nodes are many and found later: each is verified by its own name.
	if cfg.ServerName == "" && len(t.Addrs) > 0 && t.Sentinel == nil {
		if host, _, err := net.SplitHostPort(t.Addrs[0]); err == nil {
			cfg.ServerName = host
		}
	}
	if files.CA != "" {
		pool, err := LoadCA(files.CA)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		cfg.RootCAs = pool
	}
	if (files.Cert == "") != (files.Key == "") {
		return fmt.Errorf("tls: a client certificate needs both its cert and key files")
	}
	if files.Cert != "" {
		pair, err := LoadClientCert(files.Cert, files.Key)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	cfg.InsecureSkipVerify = files.Insecure
	t.TLS = cfg
	return nil
}

// LoadCA reads the PEM certificates of a CA file, to verify servers by.
func LoadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// LoadClientCert reads a client certificate and its key, for servers that ask for one.
func LoadClientCert(certFile, keyFile string) (tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("client certificate: %w", err)
	}
	return pair, nil
}

// IsClusterNode reports whether the server rdb talks to runs in cluster mode. A server that will
// not say (INFO refused to the user, or unreachable: the clock read that follows reports that)
// is taken as standalone.
func IsClusterNode(ctx context.Context, rdb redis.UniversalClient) bool {
	info, err := rdb.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}
