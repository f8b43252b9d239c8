package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinel says how a primary is found through Redis Sentinel: the master name the Sentinels
// know it by, and the Sentinels' own credentials, which deployments keep apart from the data
// nodes'.
type Sentinel struct {
	Master   string
	Username string
	Password string
}

// The schemes of a Sentinel address; the second is TLS to the Sentinels and the data nodes both.
const (
	sentinelScheme    = "redis-sentinel://"
	sentinelTLSScheme = "rediss-sentinel://"
)

// IsSentinelAddr reports whether a is a redis-sentinel:// or rediss-sentinel:// URL.
func IsSentinelAddr(a string) bool {
	return strings.HasPrefix(a, sentinelScheme) || strings.HasPrefix(a, sentinelTLSScheme)
}

// parseSentinelURL reads redis-sentinel://[user:pass@]host:port[,host:port…]/<master-name>[/<db>].
// The user and password are the data nodes'; the Sentinels' own come apart (SentinelTarget).
func parseSentinelURL(a string) (Target, error) {
	shown := RedactAddr(a)
	bad := func(format string, args ...any) (Target, error) {
		return Target{}, fmt.Errorf("bad addr %q: "+format, append([]any{shown}, args...)...)
	}
	t := Target{Sentinel: &Sentinel{}}
	rest := strings.TrimPrefix(a, sentinelScheme)
	if strings.HasPrefix(a, sentinelTLSScheme) {
		rest, t.TLS = strings.TrimPrefix(a, sentinelTLSScheme), &tls.Config{MinVersion: tls.VersionTLS12}
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(hosts, '@'); at >= 0 {
		user, pass, _ := strings.Cut(hosts[:at], ":")
		var err1, err2 error
		t.Username, err1 = url.PathUnescape(user)
		t.Password, err2 = url.PathUnescape(pass)
		if err1 != nil || err2 != nil {
			return bad("its user or password is not URL-escaped right")
		}
		hosts = hosts[at+1:]
	}
	if strings.ContainsAny(path, "?#") {
		return bad("a Sentinel URL takes no query or fragment")
	}
	master, db, hasDB := strings.Cut(path, "/")
	master, err := url.PathUnescape(master)
	if err != nil || master == "" {
		return bad("no master name: write redis-sentinel://host:port[,host:port…]/<master-name>")
	}
	t.Sentinel.Master = master
	if hasDB {
		if t.DB, err = strconv.Atoi(db); err != nil || t.DB < 0 {
			return bad("database %q after the master name is not a number from 0", db)
		}
	}
	for _, hp := range strings.Split(hosts, ",") {
		if msg := checkHostPort(hp); msg != "" {
			return bad("Sentinel %q: %s", hp, msg)
		}
		t.Addrs = append(t.Addrs, hp)
	}
	return t, nil
}

// checkHostPort says what is wrong with host:port, or "".
func checkHostPort(hp string) string {
	host, port, err := net.SplitHostPort(hp)
	if err != nil || host == "" {
		return "want host:port, e.g. 127.0.0.1:26379"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Sprintf("port %q is not a number from 1 to 65535", port)
	}
	return ""
}

// SentinelTarget is the target of a primary found through the Sentinels at addrs by its
// master name, with the data nodes' user and password, and the Sentinels' own.
func SentinelTarget(addrs []string, s Sentinel, username, password string) (Target, error) {
	if s.Master == "" {
		return Target{}, errors.New("no Sentinel master name")
	}
	if len(addrs) == 0 {
		return Target{}, errors.New("no Sentinel address")
	}
	for _, hp := range addrs {
		if msg := checkHostPort(hp); msg != "" {
			return Target{}, fmt.Errorf("bad Sentinel address %q: %s", hp, msg)
		}
	}
	return Target{Addrs: addrs, Username: username, Password: password, Sentinel: &s}, nil
}

// newFailoverClient is a client of the primary the Sentinels name, which follows it through
// a failover (go-redis's FailoverClient, told by the Sentinels' +switch-master). Each new
// connection checks that its node is the primary, so a Sentinel's stale answer never takes
// a write to a replica; a refusal says what the Sentinels answer.
func (t Target) newFailoverClient(dial, io time.Duration, dialAttempts int) redis.UniversalClient {
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: t.Sentinel.Master, SentinelAddrs: t.Addrs,
		SentinelUsername: t.Sentinel.Username, SentinelPassword: t.Sentinel.Password,
		Username: t.Username, Password: t.Password, DB: t.DB, TLSConfig: t.TLS,
		DialTimeout: dial, ReadTimeout: io, WriteTimeout: io, DialerRetries: dialAttempts,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return primaryOnly(ctx, cn, t) },
	})
	p := &PrimaryTrack{}
	c.AddHook(sentinelHook{t: t, track: p})
	track(c, p)
	return c
}

// primaryOnly refuses a connection to a node that says it is a replica. A user that may not
// run ROLE is let through: a replica refuses writes with READONLY all the same. go-redis calls
// it on its connections to the Sentinels too: those are told apart by their client's address,
// which on the data nodes' is "FailoverClient", and left alone.
func primaryOnly(ctx context.Context, cn *redis.Conn, t Target) error {
	if !strings.HasPrefix(cn.String(), "Redis<FailoverClient ") {
		return nil
	}
	role, err := cn.Do(ctx, "ROLE").Slice()
	if err != nil {
		if _, reply := TransientReply(err); reply {
			return nil
		}
		return err
	}
	if len(role) == 0 || role[0] == "master" {
		return nil
	}
	what := fmt.Sprint(role[0])
	if len(role) >= 3 {
		what += fmt.Sprintf(" of %v:%v", role[1], role[2])
	}
	if _, err := PrimaryFrom(t.Sentinel.Master, AskSentinels(ctx, t)); err != nil {
		return fmt.Errorf("the node the Sentinels named as the primary is a %s: %w", what, err)
	}
	return fmt.Errorf("the node the Sentinels named as the primary is a %s: a failover is under way", what)
}

// sentinelHook notes the node each new connection reaches, and replaces go-redis's word when
// no Sentinel gave the primary ("all sentinels specified in configuration are unreachable")
// with what each one answered.
type sentinelHook struct {
	t     Target
	track *PrimaryTrack
}

func (h sentinelHook) DialHook(next redis.DialHook) redis.DialHook {
	next = h.track.dialed(next)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := next(ctx, network, addr)
		if err != nil && strings.Contains(err.Error(), "sentinels specified in configuration are unreachable") {
			if _, why := PrimaryFrom(h.t.Sentinel.Master, AskSentinels(ctx, h.t)); why != nil {
				err = why
			}
		}
		return cn, err
	}
}

// ProcessHook and ProcessPipelineHook take a READONLY answer for what it is through Sentinel:
// the node was the primary when the connection was made and is a replica now, so a failover
// is under way, and sending again reaches the new primary (FailoverError).
func (sentinelHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if demoted(err) {
			err = &FailoverError{Err: err}
			cmd.SetErr(err)
		}
		return err
	}
}

func (sentinelHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if demoted(c.Err()) {
				c.SetErr(&FailoverError{Err: c.Err()})
			}
		}
		if demoted(err) {
			err = &FailoverError{Err: err}
		}
		return err
	}
}

// demoted reports whether err is a replica's refusal of a write.
func demoted(err error) bool {
	var fe *FailoverError
	return err != nil && redis.IsReadOnlyError(err) && !errors.As(err, &fe)
}

// FailoverError is a write a node refused as a replica (READONLY) through Sentinel: the
// primary it was became a replica in a failover. ClassOf takes it as transient.
type FailoverError struct{ Err error }

func (e *FailoverError) Error() string {
	return "the primary became a replica (a failover is under way): " + oneLineErr(e.Err)
}

func (e *FailoverError) Unwrap() error { return e.Err }

// SentinelAnswer is what one Sentinel said of the master: the primary's address, or none (the
// name is unknown to it, when Err is nil too), or why it did not answer.
type SentinelAnswer struct {
	Sentinel string
	Primary  string
	Err      error
}

// sentinelAsk bounds one Sentinel's answer: they answer from memory, at once.
const sentinelAsk = 2 * time.Second

// AskSentinels asks every Sentinel of t at once which node is the primary
// (SENTINEL GET-MASTER-ADDR-BY-NAME), in t.Addrs' order.
func AskSentinels(ctx context.Context, t Target) []SentinelAnswer {
	out := make([]SentinelAnswer, len(t.Addrs))
	var wg sync.WaitGroup
	for i, addr := range t.Addrs {
		wg.Go(func() {
			c := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: t.Sentinel.Username, Password: t.Sentinel.Password,
				TLSConfig: t.TLS, DialTimeout: sentinelAsk, ReadTimeout: sentinelAsk, MaxRetries: -1, DialerRetries: 1})
			defer c.Close()
			ctx, cancel := context.WithTimeout(ctx, sentinelAsk)
			defer cancel()
			out[i].Sentinel = addr
			hp, err := c.GetMasterAddrByName(ctx, t.Sentinel.Master).Result()
			switch {
			case errors.Is(err, redis.Nil):
			case err != nil:
				out[i].Err = err
			case len(hp) == 2:
				out[i].Primary = net.JoinHostPort(hp[0], hp[1])
			default:
				out[i].Err = fmt.Errorf("unexpected reply %q", hp)
			}
		})
	}
	wg.Wait()
	return out
}

// ErrUnknownMaster is why no primary is found when the Sentinels that answer do not know the
// master name.
var ErrUnknownMaster = errors.New("no Sentinel knows the master name")

// PrimaryFrom is the primary the Sentinels' answers agree on, or one line saying why there is
// none: a Sentinel that refused our credentials (permanent, ClassOf says, naming it), Sentinels
// that name different primaries, none that knows the master name (ErrUnknownMaster), or none
// that answered (each with its error). The last two are transient: they may pass.
func PrimaryFrom(master string, answers []SentinelAnswer) (string, error) {
	named := map[string][]string{} // primary -> the Sentinels naming it
	var order, unknown, silent []string
	for _, a := range answers {
		switch {
		case a.Err != nil && ClassOf(a.Err) == ClassPermanent, a.Err != nil && credentialsRefused(a.Err):
			return "", &SentinelError{Sentinel: a.Sentinel, Err: a.Err}
		case a.Err != nil:
			silent = append(silent, a.Sentinel+": "+strings.TrimPrefix(oneLineErr(a.Err), "dial tcp "+a.Sentinel+": "))
		case a.Primary == "":
			unknown = append(unknown, a.Sentinel)
		default:
			if named[a.Primary] == nil {
				order = append(order, a.Primary)
			}
			named[a.Primary] = append(named[a.Primary], a.Sentinel)
		}
	}
	switch {
	case len(order) == 1:
		return order[0], nil
	case len(order) > 1:
		var says []string
		for _, p := range order {
			says = append(says, strings.Join(named[p], ", ")+" name "+p)
		}
		return "", fmt.Errorf("the Sentinels disagree on the primary of %q: %s", master, strings.Join(says, "; "))
	case len(unknown) > 0:
		return "", fmt.Errorf("%w %q (asked %s)", ErrUnknownMaster, master, strings.Join(unknown, ", "))
	}
	return "", fmt.Errorf("no Sentinel answers: %s", strings.Join(silent, "; "))
}

// SentinelError is a Sentinel's answer that asking again cannot change: it refused our
// credentials, or it is not a Sentinel. ClassOf takes it as permanent.
type SentinelError struct {
	Sentinel string
	Err      error
}

func (e *SentinelError) Error() string {
	what := "answered"
	if credentialsRefused(e.Err) {
		what = "refused our credentials"
	}
	return fmt.Sprintf("Sentinel %s %s: %s", e.Sentinel, what, oneLineErr(e.Err))
}

func (e *SentinelError) Unwrap() error { return e.Err }

// credentialsRefused reports whether err is a login refused: a wrong password or user, none
// given where one is needed, or one given where none is set.
func credentialsRefused(err error) bool {
	msg, ok := replyText(err)
	if !ok {
		msg = err.Error()
	}
	return strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH") || strings.Contains(msg, "ERR AUTH")
}

// oneLineErr is err's text on one line (go-redis joins some errors with newlines).
func oneLineErr(err error) string {
	return strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "redis: ")), " ")
}
