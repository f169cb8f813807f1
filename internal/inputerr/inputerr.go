// Package inputerr marks errors that are the user's to fix: a bad flag, configuration, model
// file or output directory. The command line exits with status 2 for them and 1 for every
// other error, so the packages that check input return an Error and nothing else decides the
// exit status.
package inputerr

import (
	"errors"
	"fmt"
)

// Error is bad input. Its message is the wrapped error's (naming the flag or field).
type Error struct{ Err error }

// Error returns the wrapped error's message.
func (e Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e Error) Unwrap() error { return e.Err }

// New returns bad input with the message fmt.Errorf(format, args...) (%w wraps).
func New(format string, args ...any) error { return Error{fmt.Errorf(format, args...)} }

// Wrap marks err as bad input; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return Error{err}
}

// Is reports whether err is (or wraps) bad input.
func Is(err error) bool {
	var e Error
	return errors.As(err, &e)
}
