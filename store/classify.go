package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrorClass says what a caller should do with an error from Redis: the one classification every
// command, the console and the exporter act on.
type ErrorClass int

const (
	// ClassTransient errors may pass by themselves. They are a lost or timed-out connection, a
	// server loading its data (LOADING), or a server with no room for another client. So are a
	// cluster resharding or missing a master (TRYAGAIN, CLUSTERDOWN, MASTERDOWN) and a script
	// running too long (BUSY). Retry with backoff and show the fault while it lasts.
	ClassTransient ErrorClass = iota
	// ClassPermanent errors are answers that sending again cannot change. Access: the user lacks
	// the right (NOPERM), or the login is refused (WRONGPASS, NOAUTH). Data: the key holds another
	// type (WRONGTYPE), or the server takes no writes (READONLY) or no more memory (OOM). Scripts:
	// a script is not loaded and may not be loaded (NOSCRIPT). Wrong for this server: CROSSSLOT,
	// MOVED or ASK on a standalone client, an unknown command, a script error. End the command
	// within seconds with one line naming the command, the key and the cause.
	ClassPermanent
	// ClassCanceled is the caller's own ending: its context was cancelled or ran out.
	ClassCanceled
)

func (c ErrorClass) String() string {
	switch c {
	case ClassPermanent:
		return "permanent"
	case ClassCanceled:
		return "canceled"
	}
	return "transient"
}

// transientReply names the replies of a server that is busy, loading or reconfiguring.
var transientReply = regexp.MustCompile(`^(LOADING|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|BUSY|ERR max number of clients)`)

// ClassOf sorts err into one of the classes. A reply Redis gave is permanent, unless it is one of
// the known passing states. Anything that is not a reply is transient: a lost or refused
// connection, a timeout, a full pool. nil is transient too, so callers test err first.
func ClassOf(err error) ErrorClass {
	var ke *KeyError
	if errors.As(err, &ke) && (errors.Is(ke.Err, ErrWrongType) || errors.Is(ke.Err, ErrNotInteger) || errors.Is(ke.Err, ErrOverflow)) {
		return ClassPermanent
	}
	var se *SentinelError
	if errors.As(err, &se) {
		return ClassPermanent
	}
	var fe *FailoverError
	if errors.As(err, &fe) {
		return ClassTransient
	}
	if msg, ok := replyText(err); ok {
		if transientReply.MatchString(msg) {
			return ClassTransient
		}
		return ClassPermanent
	}
	switch {
	case err == nil:
		return ClassTransient
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && !isNetTimeout(err):
		return ClassCanceled
	case errors.Is(err, redis.ErrClosed):
		return ClassCanceled
	}
	return ClassTransient
}

// Permanent reports whether err is one that sending again cannot fix (see ClassPermanent).
// A writer's caller should stop retrying and say so, rather than wait for a Redis that will keep
// saying no.
func Permanent(err error) bool { return err != nil && ClassOf(err) == ClassPermanent }

// TransientReply reports whether err carries a Redis reply (reply), and whether that reply is
// one ClassOf takes as transient: a server loading, resharding or busy.
func TransientReply(err error) (transient, reply bool) {
	msg, ok := replyText(err)
	return ok && transientReply.MatchString(msg), ok
}

// replyText is the text of the Redis reply in err, when err carries one. Replies may reach the
// caller wrapped (in a *KeyError, in errors.Join, or as text inside another error), so the words
// Redis starts its errors with are also looked for in the text.
func replyText(err error) (string, bool) {
	var re redis.Error
	if errors.As(err, &re) {
		return strings.TrimPrefix(re.Error(), "redis: "), true
	}
	if err == nil {
		return "", false
	}
	if m := replyWord.FindString(err.Error()); m != "" {
		return err.Error()[strings.Index(err.Error(), m):], true
	}
	return "", false
}

var replyWord = regexp.MustCompile(`\b(NOPERM|WRONGPASS|NOAUTH|WRONGTYPE|READONLY|OOM|NOSCRIPT|CROSSSLOT|MOVED \d+|ASK \d+|LOADING|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|BUSY) `)

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Refused is the command a NOPERM reply names ("User bob has no permissions to run the 'scan'
// command" gives "scan"), or "" when err is not such a refusal. A refused key or channel gives
// "key" or "channel".
func Refused(err error) string {
	msg, ok := replyText(err)
	if !ok || !strings.HasPrefix(msg, "NOPERM") {
		return ""
	}
	if m := refusedCommand.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	switch {
	case strings.Contains(msg, "key"):
		return "key"
	case strings.Contains(msg, "channel"):
		return "channel"
	}
	return "command"
}

var refusedCommand = regexp.MustCompile(`run the '([^']+)' command`)

// CommandError is an error with what it is about: the command that failed, the key it was about
// ("" when none), the Redis user it ran as ("" for the default user) and the cause. Its text is the
// one line a command prints when it ends on a permanent error.
type CommandError struct {
	Command string
	Key     string
	User    string
	Err     error
}

func (e *CommandError) Error() string {
	var b strings.Builder
	b.WriteString(e.Command)
	if e.Key != "" {
		fmt.Fprintf(&b, " on key %q", e.Key)
	}
	if e.User != "" {
		fmt.Fprintf(&b, " as user %q", e.User)
	}
	fmt.Fprintf(&b, ": %v", causeText(e.Err))
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

// causeText is err's text without the "key ..." prefix a *KeyError adds, since a CommandError
// names the key itself.
func causeText(err error) string {
	var ke *KeyError
	if errors.As(err, &ke) && ke.Value == "" {
		return ke.Err.Error()
	}
	return err.Error()
}

// UserOf is the Redis user rdb logs in as: its configured username, or "default" when it gives
// none, as Redis itself names that user.
func UserOf(rdb redis.UniversalClient) string {
	var user string
	switch c := rdb.(type) {
	case *redis.Client:
		user = c.Options().Username
	case *redis.ClusterClient:
		user = c.Options().Username
	}
	if user == "" {
		return "default"
	}
	return user
}

// Reply is the Redis reply inside err, or err when it carries none, so a line gives the cause as
// Redis said it, without the wrapping of the operation that met it.
func Reply(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		return re
	}
	return err
}
