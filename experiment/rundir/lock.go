package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// errWouldBlock and errNoLocks are flock's outcomes when another process holds the lock and
// when the filesystem does not support locks.
var (
	errWouldBlock = errors.New("lock held by another process")
	errNoLocks    = errors.New("locks not supported")
)

// holder is what a lock file says about the process holding it.
type holder struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Start   string `json:"start"`
	Command string `json:"command"`
}

func (h holder) String() string {
	return fmt.Sprintf("pid %d on %s, started %s: %s", h.PID, h.Host, h.Start, h.Command)
}

// thisHolder describes this process.
func thisHolder() holder {
	args := append([]string(nil), os.Args...)
	if len(args) > 0 {
		args[0] = filepath.Base(args[0])
	}
	cmd := strings.Join(args, " ")
	if len(cmd) > 500 {
		cmd = cmd[:500] + "…"
	}
	return holder{PID: os.Getpid(), Host: hostname(), Start: time.Now().UTC().Format(time.RFC3339), Command: cmd}
}

// readHolder describes the holder recorded in the lock file f.
func readHolder(f *os.File) string {
	data, _ := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	var h holder
	if json.Unmarshal(data, &h) != nil || h.PID == 0 {
		return "holder unknown"
	}
	return h.String()
}

// Lock takes the exclusive lock of the run directory dir for one run, creating dir if needed:
// an flock(2) on dir/LockFile, held until release is called (or the process dies: a run
// killed with SIGKILL leaves the file but not the lock, so the next run proceeds). The lock
// file records this process's pid, host, start time and command line, so that a second run
// into dir is refused at once (ErrLocked, exit status 2) naming the first. Lock also starts
// recording the files the process writes into dir (see Prepare), until release.
//
// Every command that writes a run directory takes it first (run, reproduce, sweep merge,
// audit); sweep shards, which write their unit files into one directory at once, take the
// shared lock (LockShared), which excludes a run or a merge but not the other shards. On a
// filesystem without locks (flock fails with ENOLCK, ENOTSUP or ENOSYS: some NFS and Lustre
// mounts) the run proceeds unlocked. release removes the lock file (and dir, when Lock created
// it and it is still empty); it may be called more than once.
func Lock(dir string) (release func(), err error) { return lock(dir, true) }

// LockShared is Lock with a shared lock (sweep shards): any number of shared holders, or one
// exclusive one. The lock file names the first shared holder.
func LockShared(dir string) (release func(), err error) { return lock(dir, false) }

func lock(dir string, exclusive bool) (func(), error) {
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	created := false
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, badOut(ErrBadOut, err, "out: cannot create %s: %v", dir, reason(err))
		}
		created = true
	case err != nil:
		return nil, badOut(ErrBadOut, err, "out: %s: %v", dir, reason(err))
	case !st.IsDir():
		return nil, badOut(ErrBadOut, nil, "out: %s exists and is not a directory", dir)
	}
	undo := func() {
		if created {
			_ = os.Remove(dir)
		}
	}
	name := filepath.Join(dir, LockFile)
	var f *os.File
	locked := true
	for attempt := 0; ; attempt++ {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			undo()
			return nil, badOut(ErrBadOut, err, "out: cannot write in %s: %v", dir, reason(err))
		}
		err = flock(f, exclusive)
		if errors.Is(err, errWouldBlock) {
			h := readHolder(f)
			_ = f.Close()
			return nil, badOut(ErrLocked, nil, "out: %s is in use by another dprl process (%s); wait for it to finish or choose another directory", dir, h)
		}
		if errors.Is(err, errNoLocks) {
			locked = false
			break
		}
		if err != nil {
			_ = f.Close()
			undo()
			return nil, fmt.Errorf("out: locking %s: %w", name, err)
		}
		// The previous holder removes the file on release: between our open and our flock it
		// may have removed it (and a third process created a new one). Hold the lock of the
		// file that is at name now.
		fi1, err1 := f.Stat()
		fi2, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(fi1, fi2) {
			break
		}
		_ = f.Close()
		if attempt == 100 {
			return nil, fmt.Errorf("out: cannot lock %s: the lock file keeps changing", name)
		}
	}
	if fi, err := f.Stat(); err == nil && (exclusive || fi.Size() == 0) {
		data, _ := json.Marshal(thisHolder())
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt(append(data, '\n'), 0)
		}
	}
	r, registered, err := register(dir)
	if err != nil {
		_ = f.Close()
		return nil, badOut(ErrBadOut, err, "out: %s: %v", dir, reason(err))
	}
	return sync.OnceFunc(func() {
		if registered {
			unregister(r)
		}
		// A shared holder removes the file only when it is the last holder (the exclusive
		// lock is free to it).
		if exclusive || !locked || flock(f, true) == nil {
			_ = os.Remove(name)
		}
		_ = f.Close()
		undo()
	}), nil
}
