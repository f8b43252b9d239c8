package inspect

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// RedisCLI is the redis-cli command line that runs args against the watched Redis, quoted for a
// POSIX shell, ready to paste: the address (-h, -p; -s for a socket; -c for a cluster, from its
// first address), the database, the user and --tls from the client's options. The password is
// never written: redis-cli takes it from REDISCLI_AUTH, which the operator sets themselves.
//
// Each argument is bare when it is plain, else single-quoted; one that holds a byte that is not
// printable UTF-8 (an escape sequence, binary) is written as bash's $'...' with \xHH, so pasting
// the line reads that exact key and no control byte reaches the terminal. An argument cannot
// carry a NUL byte, so a line with one uses redis-cli's --quoted-input, with each argument that
// is not plain in redis-cli's own quotes ("...\x00..."), single-quoted for the shell.
func (in *Inspector) RedisCLI(args ...string) string {
	parts := append([]string{"redis-cli"}, cliTarget(in.rdb)...)
	quoted := false
	for _, a := range args {
		quoted = quoted || strings.IndexByte(a, 0) >= 0
	}
	if quoted {
		parts = append(parts, "--quoted-input")
	}
	for _, a := range args {
		if quoted && (a == "" || strings.IndexFunc(a, func(r rune) bool { return !shellPlain(r) }) >= 0) {
			a = "'" + cliQuote(a) + "'"
		} else {
			a = shellQuote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// cliTarget is redis-cli's options that reach the client's Redis as the client does.
func cliTarget(rdb redis.UniversalClient) []string {
	var addr, user, network string
	var db int
	var tls, cluster bool
	switch c := rdb.(type) {
	case *redis.Client:
		o := c.Options()
		addr, user, network, db, tls = o.Addr, o.Username, o.Network, o.DB, o.TLSConfig != nil
		if p := store.PrimaryOf(c); p != nil { // through Sentinel: the primary reached now
			addr, _, _ = p.Primary()
		}
	case *redis.ClusterClient:
		o := c.Options()
		if len(o.Addrs) > 0 {
			addr = o.Addrs[0]
		}
		user, tls, cluster = o.Username, o.TLSConfig != nil, true
	}
	var out []string
	if network == "unix" {
		out = append(out, "-s", shellQuote(addr))
	} else if host, port, err := net.SplitHostPort(addr); err == nil {
		out = append(out, "-h", shellQuote(host), "-p", shellQuote(port))
	}
	if cluster {
		out = append(out, "-c")
	}
	if db != 0 {
		out = append(out, "-n", strconv.Itoa(db))
	}
	if user != "" {
		out = append(out, "--user", shellQuote(user))
	}
	if tls {
		out = append(out, "--tls")
	}
	return out
}

// shellQuote quotes s as one word for a POSIX shell: bare when it holds only characters no shell
// treats specially, '...' when it is printable UTF-8 (a quote in it ends the quoting, escaped,
// and opens it again), and bash's $'...' otherwise, with every byte that is not printable as
// \xHH. The result holds no control byte and no character that changes how a terminal draws
// what follows (bidi overrides among them).
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, func(r rune) bool { return !shellPlain(r) }) < 0 {
		return s
	}
	if printable(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && n <= 1, !unicode.IsPrint(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// shellPlain reports whether r means nothing special to a shell anywhere in a word.
func shellPlain(r rune) bool {
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune("_@%+=:,./-", r))
}

// printable reports whether s is valid UTF-8 made only of printable characters (spaces aside,
// only the ASCII one).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// cliQuote writes s in redis-cli's double quotes (as its --quoted-input reads them), every byte
// outside printable ASCII, and the quotes of both redis-cli and the shell, as \xHH.
func cliQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '\'' {
			fmt.Fprintf(&b, `\x%02x`, c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}
