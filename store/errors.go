package store

import (
	"errors"
	"fmt"
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

// KeyErrorOf classifies an error text Redis gave for one key.
func KeyErrorOf(key, msg string) *KeyError {
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
