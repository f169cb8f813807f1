package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// ErrBadOut is matched (errors.Is) by every error of this package that is the user's to fix
// about an output directory: a bad path (CheckDir), a directory that cannot be created or
// written, an earlier run in it (ErrEarlierRun), a file dprl did not write that a run would
// overwrite (ErrNotOwned), another dprl process using it (ErrLocked). The CLI reports these
// as bad input (exit status 2).
var ErrBadOut = errors.New("bad output directory")

// kind is a sentinel error that also matches ErrBadOut.
type kind struct{ msg string }

func (k *kind) Error() string { return k.msg }
func (k *kind) Unwrap() error { return ErrBadOut }

// ErrEarlierRun is wrapped by Prepare's error when the directory holds files an earlier dprl
// run wrote (its ownership record lists them) and force is not set.
var ErrEarlierRun error = &kind{"output directory holds an earlier run"}

// ErrNotOwned is wrapped by the error refusing to overwrite a file that dprl did not write
// (no ownership record of the directory lists it), with or without force.
var ErrNotOwned error = &kind{"file not written by dprl"}

// ErrLocked is wrapped by Lock's error when another dprl process holds the directory's lock.
var ErrLocked error = &kind{"output directory in use by another dprl process"}

// outError is an error with its own message that matches its kind (and its cause, if any).
type outError struct {
	msg  string
	errs []error
}

func (e *outError) Error() string   { return e.msg }
func (e *outError) Unwrap() []error { return e.errs }

// badOut returns an error with the formatted message matching k (one of the sentinels above
// or ErrBadOut itself) and cause (nil for none).
func badOut(k, cause error, format string, args ...any) error {
	errs := []error{k}
	if cause != nil {
		errs = append(errs, cause)
	}
	return &outError{msg: fmt.Sprintf(format, args...), errs: errs}
}

// reason returns the operating system's reason of err without the path a *fs.PathError
// repeats ("read-only file system" rather than "mkdir /x/y: read-only file system").
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckDir checks the path of a run directory before anything is created. It must be
// non-empty; contain no control character (a newline or tab in --out is almost always a
// mistake, and breaks every line-oriented tool reading the paths back); not be the filesystem
// root (a run would take every file below it into account); and have no ".." component after a
// directory name: "a/../b" is refused rather than cleaned, since creating it creates a stray
// "a" and, when a is a symbolic link, it does not name the directory filepath.Clean says (a
// leading "..", as in "../runs/x", is fine). Errors name out and match ErrBadOut.
func CheckDir(dir string) error {
	if dir == "" {
		return badOut(ErrBadOut, nil, "out: the output directory must not be empty")
	}
	for _, r := range dir {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return badOut(ErrBadOut, nil, "out: %q must not contain control characters (newline, tab, …)", dir)
		}
	}
	named := false
	for _, c := range strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		switch c {
		case ".":
		case "..":
			if named {
				return badOut(ErrBadOut, nil, "out: %q has a \"..\" after a directory name; write the directory it means (%s)", dir, filepath.Clean(dir))
			}
		default:
			named = true
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return badOut(ErrBadOut, err, "out: %s: %v", dir, err)
	}
	if filepath.Dir(abs) == abs {
		return badOut(ErrBadOut, nil, "out: %s is the filesystem root; choose a directory below it", dir)
	}
	return nil
}
