// Package boundedread reads the files dprl is given (model files, configuration files, unit
// files, run outputs) without ever blocking or allocating without bound: the path must name a
// regular file (a FIFO, a device such as /dev/zero, a directory or a socket is refused before
// it is opened, so opening cannot wait for a writer and reading cannot go on forever), it is
// opened with O_NONBLOCK and checked again on the open descriptor (the path may have been
// replaced in between), and at most a given number of bytes is read.
//
// It is the one reader of user-supplied files: strictdecode.ReadFile, the model loaders, the
// configuration readers and the engine's unit store all go through it.
package boundedread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// DefaultLimit bounds model and configuration files (64 MiB): far above any model or
// configuration dprl uses, and small enough that decoding cannot exhaust memory.
const DefaultLimit = 64 << 20

// ErrNotRegular and ErrTooLarge are the two refusals of this package (errors.Is).
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file larger than the limit")
)

// Error is a refused file: not a regular file, or larger than the limit.
type Error struct {
	// Path is the file.
	Path string
	// Kind is ErrNotRegular or ErrTooLarge.
	Kind error
	// Mode is the file's type (for ErrNotRegular).
	Mode fs.FileMode
	// Limit is the size limit in bytes (negative: none).
	Limit int64
}

func (e *Error) Error() string {
	if e.Kind == ErrTooLarge {
		return fmt.Sprintf("%s is larger than the limit of %s", e.Path, Size(e.Limit))
	}
	msg := fmt.Sprintf("%s is %s, not a regular file", e.Path, typeName(e.Mode))
	if e.Limit >= 0 {
		msg += fmt.Sprintf(" (only regular files no larger than the limit of %s are read)", Size(e.Limit))
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Kind }

// Size writes a byte count for messages: "64 MiB" when it is a whole number of MiB, else
// "N bytes".
func Size(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// typeName names the type of a file that is not regular.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// Open opens path for reading if it is a regular file of at most limit bytes (limit < 0: no
// size check). Anything else is refused with an *Error before it is opened; the file is opened
// with O_NONBLOCK (so that a FIFO swapped in after the check cannot block the open) and its
// descriptor is checked again.
func Open(path string, limit int64) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, st, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err == nil {
		err = check(path, st, limit)
	}
	if err != nil {
		f.Close() // Read-only; nothing to lose.
		return nil, err
	}
	return f, nil
}

// check refuses a file that is not regular or is larger than limit (limit < 0: no limit).
func check(path string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return &Error{Path: path, Kind: ErrNotRegular, Mode: st.Mode(), Limit: limit}
	}
	if limit >= 0 && st.Size() > limit {
		return &Error{Path: path, Kind: ErrTooLarge, Limit: limit}
	}
	return nil
}

// ReadFile reads the whole regular file path if it holds at most limit bytes (limit ≥ 0). The
// file is checked as by Open, and at most limit+1 bytes are read, so a file that grows after
// the check is refused as well.
func ReadFile(path string, limit int64) ([]byte, error) {
	if limit < 0 {
		return nil, fmt.Errorf("boundedread: negative limit %d", limit)
	}
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close() // Read-only; a close error cannot lose data.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &Error{Path: path, Kind: ErrTooLarge, Limit: limit}
	}
	return data, nil
}

// ReadField is ReadFile with the field (flag or configuration field) that named the file in
// front of every error: "--env-file: /tmp/p is a named pipe (FIFO), not a regular file".
func ReadField(field, path string, limit int64) ([]byte, error) {
	data, err := ReadFile(path, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return data, nil
}
