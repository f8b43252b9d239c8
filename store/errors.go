package store

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Conditions callers act on. A *KeyError wraps one of them with the key it is about.
var (
	// ErrWrongType: the key holds a Redis type other than a string.
	ErrWrongType = errors.New("key holds the wrong type")
	// ErrNotInteger: the key's value is not a 64-bit integer (e.g. "12abc").
	ErrNotInteger = errors.New("value is not an integer")
	// ErrOverflow: adding the delta would overflow a 64-bit integer.
	ErrOverflow = errors.New("increment would overflow")
)

// KeyError reports a key that could not be read or written, with what it held when known.
type KeyError struct {
	Key   string
	Value string // the offending value, when there is one to show
	Err   error  // ErrWrongType, ErrNotInteger, ErrOverflow or the error Redis gave
}

func (e *KeyError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("key %q: %v (value %q)", e.Key, e.Err, e.Value)
	}
	return fmt.Sprintf("key %q: %v", e.Key, e.Err)
}

func (e *KeyError) Unwrap() error { return e.Err }

// redisKeyError classifies an error text Redis gave for one key.
func redisKeyError(key, msg string) *KeyError {
	switch {
	case strings.HasPrefix(msg, "WRONGTYPE"):
		return &KeyError{Key: key, Err: ErrWrongType}
	case strings.Contains(msg, "overflow"):
		return &KeyError{Key: key, Err: ErrOverflow}
	case strings.Contains(msg, "not an integer"):
		return &KeyError{Key: key, Err: ErrNotInteger}
	}
	return &KeyError{Key: key, Err: errors.New(msg)}
}

// Permanent reports whether err is one that sending again cannot fix: Redis refused this user
// the command (NOPERM) or the login (WRONGPASS, NOAUTH), or a cluster node was addressed as a
// standalone server (CROSSSLOT, MOVED, ASK). A writer's caller should stop retrying and say so,
// rather than wait for a Redis that will keep saying no.
func Permanent(err error) bool {
	return err != nil && permanentReply.MatchString(err.Error())
}

var permanentReply = regexp.MustCompile(`\b(NOPERM|WRONGPASS|NOAUTH|CROSSSLOT|MOVED \d+|ASK \d+)\b`)
