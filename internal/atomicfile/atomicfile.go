// Package atomicfile writes files atomically: the new contents are written to
// a temporary file in the destination directory, flushed to stable storage and
// then renamed over the destination, so readers see either the old file or the
// complete new one, never a partial write.
//
// Every write first consults the process's guard (SetGuard), if one is installed, with the
// destination path: the guard may refuse the write before anything is created. Package
// experiment/rundir installs one that records, in a run directory's ownership record, each
// file a run writes there, and refuses to overwrite a file dprl did not write.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// A Guard is called with the destination path of every write of this package (WriteFile,
// WriteBytes, WriteBytesNoSync) before the temporary file is created. A non-nil error refuses
// the write: it is returned unchanged and nothing is created or changed. A guard must be safe
// for concurrent use.
type Guard func(path string) error

// guard holds the installed Guard (nil: none).
var guard atomic.Pointer[Guard]

// SetGuard installs g as the process's guard (nil removes it) and returns the previous one.
func SetGuard(g Guard) Guard {
	var p *Guard
	if g != nil {
		p = &g
	}
	if old := guard.Swap(p); old != nil {
		return *old
	}
	return nil
}

// bufferSize is the size of the buffer placed between the write callback and
// the temporary file, so that callers issuing many small writes stay fast.
const bufferSize = 64 << 10

// WriteFile atomically replaces the file at path with the bytes produced by
// write.
//
// The data are written through a buffered writer to a temporary file created
// in the same directory as path (so the final rename cannot cross file
// systems). The temporary file is given permission bits perm (applied with
// chmod, so the process umask does not reduce them), flushed, fsynced, closed
// and finally renamed over path. If write or any of these steps fails, the
// temporary file is removed, path is left untouched, and the error is
// returned. The temporary file is also removed if write panics; the panic is
// then propagated.
//
// After a successful rename the containing directory is fsynced on a
// best-effort basis to make the rename itself durable; because the new file
// is already in place at that point, a failure there is not reported.
//
// If path is a symbolic link, the link itself is replaced by a regular file.
func WriteFile(path string, write func(w io.Writer) error, perm os.FileMode) error {
	return writeFile(path, write, perm, (*os.File).Sync, syncDir)
}

// WriteFileVerified is WriteFile with verify called on the complete, fsynced temporary file
// before it replaces path (an error refuses it: path is left untouched), as in CreateFile.
func WriteFileVerified(path string, write func(w io.Writer) error, verify func(tmp string) error, perm os.FileMode) error {
	return writeFileMode(path, write, perm, (*os.File).Sync, syncDir, false, verify)
}

// CreateFile writes a new file at path like WriteFile (temporary file, fsync, then into place,
// then the directory fsynced) but never replaces an existing file: the complete temporary file
// is hard-linked to path, which fails with an error wrapping fs.ErrExist when path exists (also
// when it appeared while the data were written), and the temporary file is removed in every
// case. verify, if non-nil, is called with the complete, fsynced temporary file's path before
// it is linked: an error refuses it (returned unchanged, nothing created). The file system
// must support hard links.
func CreateFile(path string, write func(w io.Writer) error, verify func(tmp string) error, perm os.FileMode) error {
	return writeFileMode(path, write, perm, (*os.File).Sync, syncDir, true, verify)
}

// WriteBytesNoSync atomically replaces the file at path with data like WriteBytes, but
// without flushing it to stable storage: the temporary file is neither fsynced before the
// rename nor is the directory fsynced after it. The replacement is still atomic for every
// reader and survives the death of the writing process at any moment (kill -9: the data are
// in the kernel's page cache); only a crash of the whole machine or a power cut can leave an
// empty or partial file at path. Use it only for files that verify their own contents (a
// checksum trailer) so that such a file is detected and regenerated; it saves the two
// fsyncs, which dominate the cost of writing many small files.
func WriteBytesNoSync(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, perm, nil, nil)
}

// writeFile is WriteFile with the durability as parameters: syncFile, if not nil, flushes the
// temporary file to stable storage before the rename, and renamed, if not nil, is called with
// the directory after the rename (WriteFile: fsync it; a Batch: note it for Sync).
func writeFile(path string, write func(w io.Writer) error, perm os.FileMode, syncFile func(*os.File) error, renamed func(dir string)) error {
	return writeFileMode(path, write, perm, syncFile, renamed, false, nil)
}

// writeFileMode is writeFile (noReplace false: renamed over path) and CreateFile (noReplace:
// linked to path, never replacing it); verify, if not nil, checks the complete temporary file
// before it is put in place.
func writeFileMode(path string, write func(w io.Writer) error, perm os.FileMode, syncFile func(*os.File) error, renamed func(dir string), noReplace bool, verify func(string) error) (err error) {
	if write == nil {
		return errors.New("atomicfile: nil write function")
	}
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("atomicfile: invalid path %q", path)
	}
	if dir == "" {
		dir = "."
	}
	if g := guard.Load(); g != nil {
		if err := (*g)(path); err != nil {
			return err
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomicfile: create temporary file for %s: %w", path, err)
	}
	tmp := f.Name()
	committed := false
	closed := false
	defer func() {
		if committed {
			return
		}
		if !closed {
			_ = f.Close() // The primary error (or panic) is what matters.
		}
		_ = os.Remove(tmp)
	}()

	bw := bufio.NewWriterSize(f, bufferSize)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", tmp, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("atomicfile: chmod %s: %w", tmp, err)
	}
	if syncFile != nil {
		if err := syncFile(f); err != nil {
			return fmt.Errorf("atomicfile: sync %s: %w", tmp, err)
		}
	}
	closed = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: close %s: %w", tmp, err)
	}
	if verify != nil {
		if err := verify(tmp); err != nil {
			return err
		}
	}
	if noReplace {
		if err := os.Link(tmp, path); err != nil {
			_ = os.Remove(tmp)
			committed = true
			return fmt.Errorf("atomicfile: %w", err)
		}
		_ = os.Remove(tmp)
	} else if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: rename %s to %s: %w", tmp, path, err)
	}
	committed = true
	if renamed != nil {
		renamed(dir)
	}
	return nil
}

// WriteBytes atomically replaces the file at path with data, with the same
// guarantees as WriteFile.
func WriteBytes(path string, data []byte, perm os.FileMode) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, perm)
}

// syncDir fsyncs directory dir so that a completed rename survives a crash.
// It is best effort: some platforms and file systems do not support syncing
// directories, and the rename has already taken effect when it is called.
func syncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// A Batch writes files atomically, as WriteFile does, and makes their renames durable together:
// each file is written to a temporary file, fsynced and renamed over its destination at once
// (so it is visible as soon as its write returns, and a crash at any moment leaves either the
// old or the complete new contents at its path, exactly as with WriteFile), but the directories
// holding the renamed files are fsynced only by Sync, once each however many files were renamed
// in them: n files in one directory cost n + 1 fsyncs instead of 2n.
//
// Until Sync returns, a crash may undo some of the batch's renames (each then leaves the
// previous file, or none, at its path; never a partial one). So call Sync before the files are
// reported as written, and before writing a file that says they are complete (such as a run's
// manifest, written after its outputs). The zero Batch is ready to use; its methods are safe
// for concurrent use (two files written at once fsync at once, which a journaling file system
// commits together).
type Batch struct {
	mu   sync.Mutex
	dirs []string // directories renamed into since the last Sync, each once

	// fsyncFile and fsyncDir replace the fsyncs in tests (nil: (*os.File).Sync and syncDir).
	fsyncFile func(*os.File) error
	fsyncDir  func(dir string)
}

// WriteFile atomically replaces the file at path with the bytes produced by write, as the
// package's WriteFile does, except that the rename is made durable by the next Sync.
func (b *Batch) WriteFile(path string, write func(w io.Writer) error, perm os.FileMode) error {
	syncFile := b.fsyncFile
	if syncFile == nil {
		syncFile = (*os.File).Sync
	}
	return writeFile(path, write, perm, syncFile, b.note)
}

// WriteBytes atomically replaces the file at path with data, as Batch.WriteFile does.
func (b *Batch) WriteBytes(path string, data []byte, perm os.FileMode) error {
	return b.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, perm)
}

// note records dir for the next Sync.
func (b *Batch) note(dir string) {
	dir = filepath.Clean(dir)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !slices.Contains(b.dirs, dir) {
		b.dirs = append(b.dirs, dir)
	}
}

// Sync fsyncs, once each, the directories of the files renamed since the last Sync, so that
// the renames survive a crash. Like WriteFile's, the directory fsyncs are best effort (some
// platforms and file systems cannot sync a directory; the renames have taken effect).
func (b *Batch) Sync() {
	b.mu.Lock()
	dirs := b.dirs
	b.dirs = nil
	b.mu.Unlock()
	sd := b.fsyncDir
	if sd == nil {
		sd = syncDir
	}
	for _, d := range dirs {
		sd(d)
	}
}
